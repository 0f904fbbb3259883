// Linear layer on CUDA workers against the CPU implementation; skips where StarPU finds no CUDA
// worker.
#include "codelets/linear.h"
#include "codelets/linear_backward.h"

#include <gtest/gtest.h>

#include <cmath>

#include "codelets/accumulate.h"
#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/vector_partition.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

std::vector<float> absolute(std::vector<float> v) {
  for (float &x : v) x = std::fabs(x);
  return v;
}

// cuBLAS and OpenBLAS sum in different orders: the gap is bounded by a multiple of float epsilon
// times the sum of the terms' magnitudes, which the same CPU kernel gives when run on |inputs|.
// 2e-5 of it is far above that rounding yet far below any indexing mistake.
void expect_close(const std::vector<float> &got, const std::vector<float> &want,
                  const std::vector<float> &magnitude) {
  testing::expect_near_bounds(got, want, magnitude, 2e-5, 1e-6);
}

struct CpuResults {
  std::vector<float> y, dx, dw, db;
};

CpuResults cpu_results(const std::vector<float> &x, const std::vector<float> &w,
                       const std::vector<float> &b, const std::vector<float> &dy,
                       const LinearShape &s, bool relu) {
  CpuResults r{std::vector<float>(dy.size()), std::vector<float>(x.size()),
               std::vector<float>(w.size()), std::vector<float>(b.size())};
  linear_forward_cpu(x.data(), w.data(), b.data(), r.y.data(), s, relu);
  linear_backward_data_cpu(w.data(), dy.data(), r.dx.data(), s);
  linear_backward_weights_cpu(x.data(), dy.data(), r.dw.data(), r.db.data(), s, false);
  return r;
}

class LinearCudaTest : public testing::CudaSchedulerTest {};

const LinearShape kShapes[] = {{1, 1, 1},     {1, 7, 1},        {3, 1, 5},       {7, 13, 1},
                               {33, 70, 129}, {256, 1024, 100}, {64, 2048, 1000}};

TEST_P(LinearCudaTest, ForwardAndBackwardOnCudaMatchCpu) {
  uint32_t seed = 1;
  int tasks = 0;
  for (const LinearShape &s : kShapes)
    for (bool relu : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(s.n) + " in=" + std::to_string(s.in) +
                   " out=" + std::to_string(s.out) + (relu ? " relu" : ""));
      const auto x = testing::random_floats(size_t(s.n) * s.in, seed++);
      const auto w = testing::random_floats(size_t(s.out) * s.in, seed++);
      const auto b = testing::random_floats(s.out, seed++);
      const auto dy = testing::random_floats(size_t(s.n) * s.out, seed++);
      const CpuResults want = cpu_results(x, w, b, dy, s, relu);
      const CpuResults mag =
          cpu_results(absolute(x), absolute(w), absolute(b), absolute(dy), s, false);

      RegisteredVector xh(x), wh(w), bh(b), dyh(dy), yh(dy.size(), -7.0f), dxh(x.size(), -7.0f),
          dwh(w.size(), -7.0f), dbh(b.size(), -7.0f);
      submit_linear_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(), s, relu,
                            Where::cuda);
      submit_linear_backward_data(wh.handle(), dyh.handle(), dxh.handle(), s, Where::cuda);
      submit_linear_backward_weights(xh.handle(), dyh.handle(), dwh.handle(), dbh.handle(), s,
                                     GradientAccess::overwrite, Where::cuda);
      tasks += 3;
      expect_close(yh.read(), want.y, mag.y);
      expect_close(dxh.read(), want.dx, mag.dx);
      expect_close(dwh.read(), want.dw, mag.dw);
      expect_close(dbh.read(), want.db, mag.db);
    }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
  std::printf("[ linear ] %s: %d tasks on CUDA workers, %d on CPU workers\n", GetParam().c_str(),
              counts.cuda_tasks, counts.cpu_tasks);
}

// Sub-batch tasks summing dW and db through STARPU_REDUX, first on CUDA workers only, then on
// whichever workers the scheduler picks (private copies in RAM and VRAM are then added together).
TEST_P(LinearCudaTest, SubBatchReductionMatchesWholeBatchOnCpu) {
  const LinearShape s{200, 300, 70};
  const std::vector<uint32_t> samples = {1, 64, 63, 32, 40};
  const auto x = testing::random_floats(size_t(s.n) * s.in, 400);
  const auto w = testing::random_floats(size_t(s.out) * s.in, 401);
  const auto b = testing::random_floats(s.out, 402);
  const auto dy = testing::random_floats(size_t(s.n) * s.out, 403);
  const CpuResults want = cpu_results(x, w, b, dy, s, false);
  const CpuResults mag = cpu_results(absolute(x), absolute(w), absolute(b), absolute(dy), s, false);

  RegisteredVector xh(x), dyh(dy), dwh(w.size(), -7.0f), dbh(b.size(), -7.0f);
  testing::partition_samples(xh.handle(), samples, s.in);
  testing::partition_samples(dyh.handle(), samples, s.out);
  int cuda_only_tasks = 0;
  for (Where where : {Where::cuda, Where::any}) {
    SCOPED_TRACE(where == Where::cuda ? "CUDA only" : "any worker");
    set_sum_reduction(dwh.handle(), where);
    set_sum_reduction(dbh.handle(), where);
    submit_zero_fill(dwh.handle(), where);
    submit_zero_fill(dbh.handle(), where);
    for (unsigned p = 0; p < samples.size(); ++p)
      submit_linear_backward_weights(
          starpu_data_get_sub_data(xh.handle(), 1, p), starpu_data_get_sub_data(dyh.handle(), 1, p),
          dwh.handle(), dbh.handle(), {samples[p], s.in, s.out}, GradientAccess::accumulate, where);
    expect_close(dwh.read(), want.dw, mag.dw);
    expect_close(dbh.read(), want.db, mag.db);
    if (where == Where::cuda) cuda_only_tasks = testing::count_tasks().cuda_tasks;
  }
  starpu_data_unpartition(xh.handle(), STARPU_MAIN_RAM);
  starpu_data_unpartition(dyh.handle(), STARPU_MAIN_RAM);
  // StarPU's own reduction tasks may run anywhere; ours had to run on CUDA workers.
  EXPECT_GE(cuda_only_tasks, int(samples.size()) + 2);
}

// The fused backward on CUDA against the same on the CPU kernel, with and without its ReLU and dX.
TEST_P(LinearCudaTest, FusedBackwardOnCudaMatchesCpu) {
  uint32_t seed = 500;
  int tasks = 0;
  for (const LinearShape &s : kShapes)
    for (bool relu : {false, true})
      for (bool input_grad : {true, false}) {
        SCOPED_TRACE("n=" + std::to_string(s.n) + " in=" + std::to_string(s.in) + " out=" +
                     std::to_string(s.out) + (relu ? " relu" : "") + (input_grad ? "" : " no dx"));
        const auto x = testing::random_floats(size_t(s.n) * s.in, seed++);
        const auto w = testing::random_floats(size_t(s.out) * s.in, seed++);
        const auto y = testing::random_floats(size_t(s.n) * s.out, seed++);  // ReLU mask: y > 0
        const auto dy = testing::random_floats(size_t(s.n) * s.out, seed++);
        std::vector<float> dw(w.size()), db(s.out), dz(dy.size()), dx(x.size());
        linear_backward_cpu(x.data(), w.data(), dy.data(), dw.data(), db.data(),
                            relu ? y.data() : nullptr, relu ? dz.data() : nullptr,
                            input_grad ? dx.data() : nullptr, s);
        const CpuResults mag = cpu_results(absolute(x), absolute(w), std::vector<float>(s.out),
                                           absolute(dy), s, false);
        RegisteredVector xh(x), wh(w), yh(y), dyh(dy), dwh(w.size(), -7.0f), dbh(s.out, -7.0f),
            dzh(dy.size(), -7.0f), dxh(x.size(), -7.0f);
        submit_linear_backward(xh.handle(), wh.handle(), dyh.handle(), dwh.handle(), dbh.handle(),
                               relu ? yh.handle() : nullptr, relu ? dzh.handle() : nullptr,
                               input_grad ? dxh.handle() : nullptr, s, Where::cuda);
        ++tasks;
        expect_close(dwh.read(), dw, mag.dw);
        expect_close(dbh.read(), db, mag.db);
        if (input_grad) {
          expect_close(dxh.read(), dx, mag.dx);
        }
        if (relu) {
          EXPECT_EQ(dzh.read(), dz);
        }
      }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(LinearCudaTest);

}  // namespace
}  // namespace starcnn
