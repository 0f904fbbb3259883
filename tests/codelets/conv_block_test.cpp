// The fused conv_block tasks (convolution + ReLU [+ maxpool], forward and backward) against the
// same ops as separate tasks (conv2d, relu, maxpool codelets, each tested against float64
// references): equal to float rounding, with and without the pool and the input gradient.
#include "codelets/conv2d/conv_block.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/relu.h"
#include "tests/codelets/conv2d_test_support.h"
#include "tests/support/comparisons.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

struct BlockResults {
  std::vector<float> out, dw, db, dx;
};

// The block's output (pooled or relu'd) and gradients, as separate tasks or as conv_block's two.
BlockResults run_block(const testing::ConvProblem &p, bool pool, bool fused, bool input_grad) {
  const Conv2dShape &s = p.shape;
  const MaxpoolShape m = conv_block_pool(s);
  const size_t out_size = pool ? m.out_size() : s.y_count();
  const std::vector<float> dout = testing::random_floats(out_size, 77);
  RegisteredVector xh(p.x), wh(p.w), bh(p.b), douth(dout), yh(s.y_count(), -7.0f),
      reluh(s.y_count(), -7.0f), ph(out_size, -7.0f), dzh(s.y_count(), -7.0f),
      dwh(s.w_count(), -7.0f), dbh(s.b_count(), -7.0f), dxh(s.x_count(), -7.0f);
  RegisteredVector argmax(out_size);  // int32 indices: the same 4-byte elements
  if (fused) {
    const ColScratch col(s);
    submit_conv_block_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(),
                              pool ? ph.handle() : nullptr, pool ? argmax.handle() : nullptr,
                              col.handle(), s, Where::cpu);
    submit_conv_block_backward(xh.handle(), wh.handle(), douth.handle(),
                               pool ? argmax.handle() : yh.handle(), pool, dzh.handle(),
                               dwh.handle(), dbh.handle(), input_grad ? dxh.handle() : nullptr,
                               col.handle(), s, Where::cpu);
    return {pool ? ph.read() : yh.read(), dwh.read(), dbh.read(), dxh.read()};
  }
  submit_conv2d_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(), s, Where::cpu);
  if (pool) {
    submit_relu_maxpool_forward(yh.handle(), ph.handle(), argmax.handle(), m, Where::cpu);
    submit_maxpool_backward(douth.handle(), argmax.handle(), dzh.handle(), m, Where::cpu);
  } else {
    submit_relu_forward(yh.handle(), reluh.handle(), Where::cpu);
    submit_relu_backward(reluh.handle(), douth.handle(), dzh.handle(), Where::cpu);
  }
  submit_conv2d_backward_filter(xh.handle(), dzh.handle(), dwh.handle(), dbh.handle(), s,
                                GradientAccess::overwrite, Where::cpu);
  if (input_grad)
    submit_conv2d_backward_data(wh.handle(), dzh.handle(), dxh.handle(), s,
                                GradientAccess::overwrite, Where::cpu);
  return {pool ? ph.read() : reluh.read(), dwh.read(), dbh.read(), dxh.read()};
}

class ConvBlockTest : public testing::CpuSchedulerTest {};

TEST_P(ConvBlockTest, FusedTasksEqualTheSeparateOps) {
  uint32_t seed = 1;
  for (const Conv2dShape &s : testing::test_shapes())
    for (bool pool : {false, true})
      for (bool input_grad : {true, false}) {
        if (pool && (s.out_h() < 2 || s.out_w() < 2)) continue;  // nothing to pool
        SCOPED_TRACE(testing::describe(s) + (pool ? " pool" : "") + (input_grad ? "" : " no dx"));
        const testing::ConvProblem p = testing::random_problem(s, seed);
        seed += 4;
        const BlockResults want = run_block(p, pool, false, input_grad);
        const BlockResults got = run_block(p, pool, true, input_grad);
        // The same kernels in the same order: equal but for the compiler's contractions.
        testing::expect_close(got.out, want.out, 1e-6);
        testing::expect_close(got.dw, want.dw, 1e-6);
        testing::expect_close(got.db, want.db, 1e-6);
        if (input_grad) {
          testing::expect_close(got.dx, want.dx, 1e-6);
        } else {
          EXPECT_EQ(got.dx, std::vector<float>(s.x_count(), -7.0f));
        }
      }
}

TEST_P(ConvBlockTest, BadHandlesAreRefused) {
  const Conv2dShape s{2, 3, 8, 8, 4, 3, 1, 1};
  RegisteredVector x(s.x_count()), w(s.w_count()), b(s.b_count()), y(s.y_count()),
      shorter(s.y_count() - 1);
  const ColScratch col(s);
  EXPECT_THROW(submit_conv_block_forward(x.handle(), w.handle(), b.handle(), shorter.handle(),
                                         nullptr, nullptr, col.handle(), s),
               std::invalid_argument);
  EXPECT_THROW(submit_conv_block_forward(x.handle(), w.handle(), b.handle(), y.handle(), y.handle(),
                                         nullptr, col.handle(), s),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(ConvBlockTest);

}  // namespace
}  // namespace starcnn
