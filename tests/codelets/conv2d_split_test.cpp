// A convolution whose filters are split into k slices (conv per slice, merge; split dY, per-slice
// gradients, REDUX-summed dX) gives the unsplit convolution's results to float32 rounding.
#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/merge.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/codelets/conv2d_reference.h"
#include "tests/codelets/conv2d_test_support.h"
#include "tests/support/comparisons.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"

namespace starcnn {
namespace {

using testing::ConvProblem;
using testing::ConvResults;
using testing::RegisteredVector;

// The layer split into slices of `filters` filters each, as the design's task graph does it.
ConvResults run_split(const ConvProblem &p, const std::vector<uint32_t> &filters) {
  const Conv2dShape &s = p.shape;
  const uint32_t plane = s.out_h() * s.out_w();
  RegisteredVector xh(p.x), wh(p.w), bh(p.b), dyh(p.r), yh(s.y_count(), -7.0f),
      dwh(s.w_count(), -7.0f), dbh(s.b_count(), -7.0f), dxh(s.x_count(), -7.0f);
  const auto [w_len, b_len] = testing::filter_slice_lengths(s, filters);
  const auto ws = testing::partition_vector(wh.handle(), w_len);
  const auto bs = testing::partition_vector(bh.handle(), b_len);
  const auto dws = testing::partition_vector(dwh.handle(), w_len);
  const auto dbs = testing::partition_vector(dbh.handle(), b_len);
  std::vector<std::unique_ptr<RegisteredVector>> y_parts, dy_parts;
  std::vector<starpu_data_handle_t> ys, dys;
  for (uint32_t f : filters) {
    y_parts.push_back(std::make_unique<RegisteredVector>(size_t(s.n) * f * plane, -7.0f));
    dy_parts.push_back(std::make_unique<RegisteredVector>(size_t(s.n) * f * plane, -7.0f));
    ys.push_back(y_parts.back()->handle());
    dys.push_back(dy_parts.back()->handle());
  }
  const MergeShape merge = make_merge_shape(s.n, plane, filters);
  set_sum_reduction(dxh.handle());
  starpu_data_invalidate_submit(dxh.handle());  // dX is the sum of the slices' parts only

  for (size_t i = 0; i < filters.size(); ++i) {
    Conv2dShape slice = s;
    slice.c_out = filters[i];
    submit_conv2d_forward(xh.handle(), ws[i], bs[i], ys[i], slice);
  }
  submit_merge(ys, yh.handle(), merge);
  submit_split(dyh.handle(), dys, merge);
  for (size_t i = 0; i < filters.size(); ++i) {
    Conv2dShape slice = s;
    slice.c_out = filters[i];
    submit_conv2d_backward_filter(xh.handle(), dys[i], dws[i], dbs[i], slice);
    submit_conv2d_backward_data(ws[i], dys[i], dxh.handle(), slice, GradientAccess::accumulate);
  }
  for (starpu_data_handle_t h : {wh.handle(), bh.handle(), dwh.handle(), dbh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
  return {yh.read(), dwh.read(), dbh.read(), dxh.read()};
}

// Equal up to float32 rounding of a different summation order: 1e-5 of the largest magnitude.
void expect_same(const std::vector<float> &got, const std::vector<float> &want) {
  testing::expect_near_scaled(got, want, 1e-5);
}

class Conv2dSplitTest : public testing::CpuSchedulerTest {};

TEST_P(Conv2dSplitTest, SplitFiltersGiveTheUnsplitResults) {
  const std::vector<std::vector<uint32_t>> splits = {{12}, {5, 7}, {2, 7, 3}, {1, 3, 2, 1, 4, 1}};
  const std::vector<Conv2dShape> shapes = {{3, 3, 9, 8, 12, 3, 1, 1}, {2, 2, 13, 11, 12, 5, 2, 0}};
  uint32_t seed = 60;
  for (const Conv2dShape &s : shapes) {
    const ConvProblem p = testing::random_problem(s, seed += 10);
    const ConvResults whole = testing::run_whole_layer(p);
    // The unsplit run itself is checked against the float64 reference.
    testing::expect_close(whole.y, testing::reference_forward(s, p.x, p.w, p.b));
    testing::expect_close(whole.dx, testing::reference_backward_data(s, p.w, p.r));
    for (const auto &filters : splits) {
      SCOPED_TRACE(testing::describe(s) + ", " + std::to_string(filters.size()) + " slices");
      const ConvResults split = run_split(p, filters);
      expect_same(split.y, whole.y);
      expect_same(split.dw, whole.dw);
      expect_same(split.db, whole.db);
      expect_same(split.dx, whole.dx);
    }
  }
}

// Filter slices times sub-batches, as a CPU share is cut: each (slice, sub-batch) task adds into
// its slice's dW_p/db_p sub-handle and into its sub-batch's dX sub-handle, all through
// STARPU_REDUX.
TEST_P(Conv2dSplitTest, SlicesTimesSubBatchesSumIntoSubHandles) {
  const Conv2dShape s{6, 3, 8, 7, 12, 3, 1, 1};
  const std::vector<uint32_t> filters = {5, 7}, samples = {2, 3, 1};
  const ConvProblem p = testing::random_problem(s, 90);
  RegisteredVector xh(p.x), wh(p.w), dyh(p.r), dwh(s.w_count(), -7.0f), dbh(s.b_count(), -7.0f),
      dxh(s.x_count(), -7.0f);
  const auto [w_len, b_len] = testing::filter_slice_lengths(s, filters);
  const auto x_len = testing::sub_batch_lengths(s.x_count(), s.n, samples);
  const auto ws = testing::partition_vector(wh.handle(), w_len);
  const auto dws = testing::partition_vector(dwh.handle(), w_len);
  const auto dbs = testing::partition_vector(dbh.handle(), b_len);
  const auto xs = testing::partition_vector(xh.handle(), x_len);
  const auto dxs = testing::partition_vector(dxh.handle(), x_len);
  for (const auto *handles : {&dws, &dbs, &dxs})
    for (starpu_data_handle_t h : *handles) {
      set_sum_reduction(h);
      starpu_data_invalidate_submit(h);
    }
  // dY of slice f and sub-batch i: its own registered copy (a 2-D cut of one tensor).
  std::vector<std::unique_ptr<RegisteredVector>> dy_blocks;
  const uint32_t plane = s.out_h() * s.out_w();
  uint32_t first_sample = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    uint32_t first_filter = 0;
    for (size_t f = 0; f < filters.size(); ++f) {
      std::vector<float> block;
      for (uint32_t n = first_sample; n < first_sample + samples[i]; ++n)
        for (uint32_t c = first_filter; c < first_filter + filters[f]; ++c)
          for (uint32_t j = 0; j < plane; ++j)
            block.push_back(p.r[(size_t(n) * s.c_out + c) * plane + j]);
      dy_blocks.push_back(std::make_unique<RegisteredVector>(block));
      Conv2dShape task = s;
      task.n = samples[i];
      task.c_out = filters[f];
      submit_conv2d_backward_filter(xs[i], dy_blocks.back()->handle(), dws[f], dbs[f], task,
                                    GradientAccess::accumulate);
      submit_conv2d_backward_data(ws[f], dy_blocks.back()->handle(), dxs[i], task,
                                  GradientAccess::accumulate);
      first_filter += filters[f];
    }
    first_sample += samples[i];
  }
  for (starpu_data_handle_t h :
       {wh.handle(), dwh.handle(), dbh.handle(), xh.handle(), dxh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
  testing::expect_close(dwh.read(), testing::reference_backward_filter(s, p.x, p.r));
  testing::expect_close(dbh.read(), testing::reference_backward_bias(s, p.r));
  testing::expect_close(dxh.read(), testing::reference_backward_data(s, p.w, p.r));
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(Conv2dSplitTest);

}  // namespace
}  // namespace starcnn
