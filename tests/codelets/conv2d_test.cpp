// Convolution codelets on CPU workers against a float64 naive convolution and against central
// finite differences of it, under each test scheduler.
#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"

#include <gtest/gtest.h>

#include "tests/codelets/conv2d_reference.h"
#include "tests/codelets/conv2d_test_support.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::ConvProblem;
using testing::RegisteredVector;

class Conv2dTest : public testing::CpuSchedulerTest {};

TEST_P(Conv2dTest, ForwardMatchesReference) {
  uint32_t seed = 10;
  for (const Conv2dShape &s : testing::test_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    const ConvProblem p = testing::random_problem(s, seed += 10);
    RegisteredVector xh(p.x), wh(p.w), bh(p.b), yh(s.y_count(), -7.0f);
    submit_conv2d_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(), s);
    testing::expect_close(yh.read(), testing::reference_forward(s, p.x, p.w, p.b));
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, int(testing::test_shapes().size()));
}

TEST_P(Conv2dTest, BackwardFilterMatchesReferenceAndFiniteDifferences) {
  uint32_t seed = 20;
  for (const Conv2dShape &s : testing::test_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    const ConvProblem p = testing::random_problem(s, seed += 10);
    RegisteredVector xh(p.x), dyh(p.r), dwh(s.w_count(), -7.0f), dbh(s.b_count(), -7.0f);
    submit_conv2d_backward_filter(xh.handle(), dyh.handle(), dwh.handle(), dbh.handle(), s);
    const std::vector<float> dw = dwh.read(), db = dbh.read();
    testing::expect_close(dw, testing::reference_backward_filter(s, p.x, p.r));
    testing::expect_close(db, testing::reference_backward_bias(s, p.r));
    testing::expect_matches_differences(dw, testing::finite_differences(s, p.x, p.w, p.b, p.r, 1));
    testing::expect_matches_differences(db, testing::finite_differences(s, p.x, p.w, p.b, p.r, 2));
  }
}

TEST_P(Conv2dTest, BackwardDataMatchesReferenceAndFiniteDifferences) {
  uint32_t seed = 30;
  for (const Conv2dShape &s : testing::test_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    const ConvProblem p = testing::random_problem(s, seed += 10);
    RegisteredVector wh(p.w), dyh(p.r), dxh(s.x_count(), -7.0f);
    submit_conv2d_backward_data(wh.handle(), dyh.handle(), dxh.handle(), s,
                                GradientAccess::overwrite);
    const std::vector<float> dx = dxh.read();
    testing::expect_close(dx, testing::reference_backward_data(s, p.w, p.r));
    testing::expect_matches_differences(dx, testing::finite_differences(s, p.x, p.w, p.b, p.r, 0));
  }
}

// Accumulating tasks add to what the handle held: REDUX sums the old value and every task's part.
TEST_P(Conv2dTest, AccumulateAddsToThePreviousValue) {
  const Conv2dShape s{2, 3, 7, 9, 4, 3, 1, 1};
  const ConvProblem p = testing::random_problem(s, 40);
  const std::vector<float> dw0 = testing::random_floats(s.w_count(), 41);
  const std::vector<float> dx0 = testing::random_floats(s.x_count(), 42);
  RegisteredVector xh(p.x), wh(p.w), dyh(p.r), dwh(dw0), dbh(s.b_count(), 0.5f), dxh(dx0);
  for (starpu_data_handle_t h : {dwh.handle(), dbh.handle(), dxh.handle()}) set_sum_reduction(h);
  for (int twice = 0; twice < 2; ++twice) {
    submit_conv2d_backward_filter(xh.handle(), dyh.handle(), dwh.handle(), dbh.handle(), s,
                                  GradientAccess::accumulate);
    submit_conv2d_backward_data(wh.handle(), dyh.handle(), dxh.handle(), s,
                                GradientAccess::accumulate);
  }
  std::vector<double> dw = testing::reference_backward_filter(s, p.x, p.r);
  std::vector<double> db = testing::reference_backward_bias(s, p.r);
  std::vector<double> dx = testing::reference_backward_data(s, p.w, p.r);
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = dw0[i] + 2 * dw[i];
  for (size_t i = 0; i < db.size(); ++i) db[i] = 0.5 + 2 * db[i];
  for (size_t i = 0; i < dx.size(); ++i) dx[i] = dx0[i] + 2 * dx[i];
  testing::expect_close(dwh.read(), dw);
  testing::expect_close(dbh.read(), db);
  testing::expect_close(dxh.read(), dx);
}

// A batch cut into uneven sub-batches, one task each: forward and input gradients land in their
// sub-handles, and the weight/bias gradients of all sub-batches sum through STARPU_REDUX.
TEST_P(Conv2dTest, SubBatchesGiveTheWholeBatchResult) {
  const Conv2dShape whole{7, 3, 9, 8, 5, 3, 1, 1};
  const std::vector<uint32_t> samples = {3, 1, 2, 1};
  const ConvProblem p = testing::random_problem(whole, 50);
  RegisteredVector xh(p.x), wh(p.w), bh(p.b), dyh(p.r), yh(whole.y_count(), -7.0f),
      dxh(whole.x_count(), -7.0f), dwh(whole.w_count(), -7.0f), dbh(whole.b_count(), -7.0f);
  set_sum_reduction(dwh.handle());
  set_sum_reduction(dbh.handle());
  starpu_data_invalidate_submit(dwh.handle());  // the sum starts from nothing
  submit_zero_fill(dbh.handle());               // ... or from zero

  const auto x_len = testing::sub_batch_lengths(whole.x_count(), whole.n, samples);
  const auto y_len = testing::sub_batch_lengths(whole.y_count(), whole.n, samples);
  const auto xs = testing::partition_vector(xh.handle(), x_len);
  const auto dxs = testing::partition_vector(dxh.handle(), x_len);
  const auto ys = testing::partition_vector(yh.handle(), y_len);
  const auto dys = testing::partition_vector(dyh.handle(), y_len);
  for (size_t i = 0; i < samples.size(); ++i) {
    Conv2dShape s = whole;
    s.n = samples[i];
    submit_conv2d_forward(xs[i], wh.handle(), bh.handle(), ys[i], s);
    submit_conv2d_backward_filter(xs[i], dys[i], dwh.handle(), dbh.handle(), s,
                                  GradientAccess::accumulate);
    submit_conv2d_backward_data(wh.handle(), dys[i], dxs[i], s, GradientAccess::overwrite);
  }
  for (starpu_data_handle_t h : {xh.handle(), dxh.handle(), yh.handle(), dyh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);

  testing::expect_close(yh.read(), testing::reference_forward(whole, p.x, p.w, p.b));
  testing::expect_close(dwh.read(), testing::reference_backward_filter(whole, p.x, p.r));
  testing::expect_close(dbh.read(), testing::reference_backward_bias(whole, p.r));
  testing::expect_close(dxh.read(), testing::reference_backward_data(whole, p.w, p.r));
  EXPECT_GE(testing::count_tasks().cpu_tasks, 3 * int(samples.size()));
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(Conv2dTest);

}  // namespace
}  // namespace starcnn
