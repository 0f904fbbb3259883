// The fused conv_block tasks on a CUDA worker against the same block's CPU kernel; skips where
// StarPU finds no CUDA worker.
#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/conv2d/conv_block.h"
#include "codelets/conv2d/sample_groups.h"

#include <gtest/gtest.h>

#include "tests/codelets/conv2d_test_support.h"
#include "tests/support/comparisons.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

class ConvBlockCudaTest : public testing::CudaSchedulerTest {};

TEST_P(ConvBlockCudaTest, FusedTasksOnCudaMatchCpu) {
  for (const Conv2dShape &s : testing::test_shapes()) prepare_conv2d(s);
  testing::start_counting_tasks();
  uint32_t seed = 900;
  int tasks = 0;
  for (const Conv2dShape &s : testing::test_shapes())
    for (bool pool : {false, true}) {
      if (pool && (s.out_h() < 2 || s.out_w() < 2)) continue;
      SCOPED_TRACE(testing::describe(s) + (pool ? " pool" : ""));
      const testing::ConvProblem p = testing::random_problem(s, seed += 10);
      const MaxpoolShape m = conv_block_pool(s);
      const size_t out = pool ? m.out_size() : s.y_count();
      const std::vector<float> dout = testing::random_floats(out, seed + 5);
      // The CPU kernel on the host.
      std::vector<float> y(s.y_count()), pooled(out), dz(s.y_count()), dw(s.w_count()),
          db(s.b_count()), dx(s.x_count()), col(cpu_col_floats(s) + 1);
      std::vector<int32_t> argmax(out);
      conv_block_forward_cpu(s, p.x.data(), p.w.data(), p.b.data(), y.data(),
                             pool ? pooled.data() : nullptr, pool ? argmax.data() : nullptr,
                             col.data());
      conv_block_backward_cpu(s, p.x.data(), p.w.data(), dout.data(), y.data(),
                              pool ? argmax.data() : nullptr, dz.data(), dw.data(), db.data(),
                              dx.data(), col.data());
      // The tasks on CUDA.
      RegisteredVector xh(p.x), wh(p.w), bh(p.b), douth(dout), yh(s.y_count(), -7.0f),
          ph(out, -7.0f), ah(out), dzh(s.y_count(), -7.0f), dwh(s.w_count(), -7.0f),
          dbh(s.b_count(), -7.0f), dxh(s.x_count(), -7.0f);
      const ColScratch scratch(s);
      submit_conv_block_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(),
                                pool ? ph.handle() : nullptr, pool ? ah.handle() : nullptr,
                                scratch.handle(), s, Where::cuda);
      submit_conv_block_backward(xh.handle(), wh.handle(), douth.handle(),
                                 pool ? ah.handle() : yh.handle(), pool, dzh.handle(), dwh.handle(),
                                 dbh.handle(), dxh.handle(), scratch.handle(), s, Where::cuda);
      tasks += 2;
      testing::expect_near_scaled(pool ? ph.read() : yh.read(), pool ? pooled : y, 1e-4);
      testing::expect_near_scaled(dwh.read(), dw, 1e-4);
      testing::expect_near_scaled(dbh.read(), db, 1e-4);
      testing::expect_near_scaled(dxh.read(), dx, 1e-4);
    }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(ConvBlockCudaTest);

}  // namespace
}  // namespace starcnn
