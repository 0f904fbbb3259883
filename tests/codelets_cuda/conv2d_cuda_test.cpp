// Convolution codelets on CUDA workers (cuDNN) against the CPU kernels; skips where StarPU finds
// no CUDA worker. Tolerance: 1e-4 of the tensor's largest magnitude, because cuDNN may pick FFT or
// Winograd algorithms whose float32 rounding is spread over the whole tensor rather than per
// element (TF32 is off: the process-wide conv math stays fp32 in tests, conv_math.h).
#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/conv2d/sample_groups.h"
#include "codelets/merge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "tests/codelets/conv2d_reference.h"
#include "tests/codelets/conv2d_test_support.h"
#include "tests/support/comparisons.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::ConvProblem;
using testing::ConvResults;
using testing::RegisteredVector;

// The CPU kernels called directly, on the whole problem.
ConvResults cpu_results(const ConvProblem &p) {
  const Conv2dShape &s = p.shape;
  std::vector<float> col(cpu_col_floats(s));
  ConvResults r{std::vector<float>(s.y_count()), std::vector<float>(s.w_count()),
                std::vector<float>(s.b_count()), std::vector<float>(s.x_count())};
  conv2d_forward_cpu(s, p.x.data(), p.w.data(), p.b.data(), r.y.data(), col.data());
  conv2d_backward_filter_cpu(s, p.x.data(), p.r.data(), r.dw.data(), r.db.data(), col.data(),
                             false);
  conv2d_backward_data_cpu(s, p.w.data(), p.r.data(), r.dx.data(), col.data(), false);
  return r;
}

void expect_near_cpu(const std::vector<float> &got, const std::vector<float> &want) {
  testing::expect_near_scaled(got, want, 1e-4);
}
void expect_near_cpu(const ConvResults &got, const ConvResults &want) {
  expect_near_cpu(got.y, want.y);
  expect_near_cpu(got.dw, want.dw);
  expect_near_cpu(got.db, want.db);
  expect_near_cpu(got.dx, want.dx);
}

class Conv2dCudaTest : public testing::CudaSchedulerTest {};

TEST_P(Conv2dCudaTest, ForwardAndBackwardOnCudaMatchCpu) {
  // prepare_conv2d runs a task on each CUDA worker: done first, then the counters restart.
  for (const Conv2dShape &s : testing::test_shapes()) prepare_conv2d(s);
  testing::start_counting_tasks();
  uint32_t seed = 100;
  for (const Conv2dShape &s : testing::test_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    const ConvProblem p = testing::random_problem(s, seed += 10);
    expect_near_cpu(testing::run_whole_layer(p, Where::cuda), cpu_results(p));
  }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, 3 * int(testing::test_shapes().size()));
  EXPECT_EQ(counts.cpu_tasks, 0);
  std::printf("[ conv2d ] %s: %d tasks on CUDA workers, %d on CPU workers\n", GetParam().c_str(),
              counts.cuda_tasks, counts.cpu_tasks);
}

// Sub-batches on CUDA workers summing weight gradients through STARPU_REDUX (beta = 1 in cuDNN).
TEST_P(Conv2dCudaTest, SubBatchGradientsSumOnCuda) {
  const Conv2dShape whole{7, 3, 9, 8, 5, 3, 1, 1};
  const std::vector<uint32_t> samples = {3, 1, 2, 1};
  const ConvProblem p = testing::random_problem(whole, 200);
  RegisteredVector xh(p.x), wh(p.w), dyh(p.r), dxh(whole.x_count(), -7.0f),
      dwh(whole.w_count(), -7.0f), dbh(whole.b_count(), -7.0f);
  set_sum_reduction(dwh.handle());
  set_sum_reduction(dbh.handle());
  starpu_data_invalidate_submit(dwh.handle());
  starpu_data_invalidate_submit(dbh.handle());
  const auto x_len = testing::sub_batch_lengths(whole.x_count(), whole.n, samples);
  const auto y_len = testing::sub_batch_lengths(whole.y_count(), whole.n, samples);
  const auto xs = testing::partition_vector(xh.handle(), x_len);
  const auto dxs = testing::partition_vector(dxh.handle(), x_len);
  const auto dys = testing::partition_vector(dyh.handle(), y_len);
  for (size_t i = 0; i < samples.size(); ++i) {
    Conv2dShape s = whole;
    s.n = samples[i];
    prepare_conv2d(s);
    submit_conv2d_backward_filter(xs[i], dys[i], dwh.handle(), dbh.handle(), s,
                                  GradientAccess::accumulate, Where::cuda);
    submit_conv2d_backward_data(wh.handle(), dys[i], dxs[i], s, GradientAccess::overwrite,
                                Where::cuda);
  }
  for (starpu_data_handle_t h : {xh.handle(), dxh.handle(), dyh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
  const ConvResults cpu = cpu_results(p);
  expect_near_cpu(dwh.read(), cpu.dw);
  expect_near_cpu(dbh.read(), cpu.db);
  expect_near_cpu(dxh.read(), cpu.dx);
  // The conv tasks were CUDA-only; the REDUX init/sum tasks may run anywhere.
  EXPECT_GE(testing::count_tasks().cuda_tasks, 2 * int(samples.size()));
}

// The design's split: one slice of filters on a CUDA worker, one on a CPU worker, merged, and dX
// summed from both through STARPU_REDUX; equal to the unsplit CPU results.
TEST_P(Conv2dCudaTest, SlicesOnCudaAndCpuGiveTheUnsplitResult) {
  const Conv2dShape s{4, 3, 10, 9, 12, 3, 1, 1};
  const std::vector<uint32_t> filters = {7, 5};
  const std::vector<Where> where = {Where::cuda, Where::cpu};
  const ConvProblem p = testing::random_problem(s, 300);
  const uint32_t plane = s.out_h() * s.out_w();
  RegisteredVector xh(p.x), wh(p.w), bh(p.b), dyh(p.r), yh(s.y_count(), -7.0f),
      dwh(s.w_count(), -7.0f), dbh(s.b_count(), -7.0f), dxh(s.x_count(), -7.0f);
  const auto [w_len, b_len] = testing::filter_slice_lengths(s, filters);
  const auto ws = testing::partition_vector(wh.handle(), w_len);
  const auto bs = testing::partition_vector(bh.handle(), b_len);
  const auto dws = testing::partition_vector(dwh.handle(), w_len);
  const auto dbs = testing::partition_vector(dbh.handle(), b_len);
  RegisteredVector y0(size_t(s.n) * filters[0] * plane, -7.0f),
      y1(size_t(s.n) * filters[1] * plane, -7.0f), dy0(y0.size(), -7.0f), dy1(y1.size(), -7.0f);
  const std::vector<starpu_data_handle_t> ys = {y0.handle(), y1.handle()},
                                          dys = {dy0.handle(), dy1.handle()};
  const MergeShape merge = make_merge_shape(s.n, plane, filters);
  set_sum_reduction(dxh.handle());
  starpu_data_invalidate_submit(dxh.handle());
  for (size_t i = 0; i < filters.size(); ++i) {
    Conv2dShape slice = s;
    slice.c_out = filters[i];
    prepare_conv2d(slice);
    submit_conv2d_forward(xh.handle(), ws[i], bs[i], ys[i], slice, where[i]);
  }
  submit_merge(ys, yh.handle(), merge);
  submit_split(dyh.handle(), dys, merge);
  for (size_t i = 0; i < filters.size(); ++i) {
    Conv2dShape slice = s;
    slice.c_out = filters[i];
    submit_conv2d_backward_filter(xh.handle(), dys[i], dws[i], dbs[i], slice,
                                  GradientAccess::overwrite, where[i]);
    submit_conv2d_backward_data(ws[i], dys[i], dxh.handle(), slice, GradientAccess::accumulate,
                                where[i]);
  }
  for (starpu_data_handle_t h : {wh.handle(), bh.handle(), dwh.handle(), dbh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
  expect_near_cpu({yh.read(), dwh.read(), dbh.read(), dxh.read()}, cpu_results(p));
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_GE(counts.cuda_tasks, 3);
  EXPECT_GE(counts.cpu_tasks, 3);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(Conv2dCudaTest);

}  // namespace
}  // namespace starcnn
