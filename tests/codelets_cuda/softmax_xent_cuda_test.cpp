// Softmax cross-entropy on CUDA workers against the CPU implementation; skips where StarPU finds
// no CUDA worker. expf and std::exp may differ by an ulp or so, so gradients match to a relative
// 1e-5; the CUDA loss sum adds float partial sums with atomics in no fixed order (the CPU adds in
// double), so up to 600000 rows' sums match to a relative 1e-4. Correct counts only compare
// logits and must match exactly.
#include "codelets/softmax_xent.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_int_vector.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredIntVector;
using testing::RegisteredVector;

std::vector<int32_t> random_labels(uint32_t n, uint32_t classes, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<int32_t> labels(n);
  for (int32_t &l : labels) l = int32_t(gen() % classes);
  return labels;
}

struct Stats : RegisteredVector {
  Stats() : RegisteredVector(kXentStatsSize, 0.0f) { set_sum_reduction(handle()); }
};

class SoftmaxXentCudaTest : public testing::CudaSchedulerTest {};

// The CPU kernels' stats and dZ for the whole of z (the batch size is shape.n).
struct CpuResults {
  float stats[kXentStatsSize] = {0.0f, 0.0f};
  std::vector<float> dz;
};
CpuResults cpu_results(const std::vector<float> &z, const std::vector<int32_t> &labels,
                       const SoftmaxXentShape &shape) {
  CpuResults r;
  r.dz.resize(z.size());
  softmax_xent_forward_cpu(z.data(), labels.data(), r.stats, shape);
  softmax_xent_backward_cpu(z.data(), labels.data(), r.dz.data(), shape, shape.n);
  return r;
}

// Batch 1, one class, fewer and more classes than a warp's 32 lanes, and more rows than the
// capped grid covers in one pass (65535 blocks of 8 rows).
const SoftmaxXentShape kShapes[] = {{1, 1},     {1, 10},   {7, 3},     {256, 10},
                                    {33, 1000}, {5, 4099}, {600000, 2}};

TEST_P(SoftmaxXentCudaTest, TasksOnCudaMatchCpu) {
  uint32_t seed = 1;
  for (const SoftmaxXentShape &s : kShapes) {
    SCOPED_TRACE("n=" + std::to_string(s.n) + " classes=" + std::to_string(s.classes));
    const size_t size = size_t(s.n) * s.classes;
    const auto z = testing::random_floats(size, ++seed, -5.0f, 5.0f);
    const auto labels = random_labels(s.n, s.classes, ++seed);
    const CpuResults want = cpu_results(z, labels, s);

    // The two tasks, then the training step's fused one.
    for (bool fused : {false, true}) {
      SCOPED_TRACE(fused ? "softmax_xent_train" : "forward and backward");
      RegisteredVector zh(z), dzh(size, -7.0f);
      RegisteredIntVector lh(labels);
      Stats stats;
      if (fused) {
        submit_softmax_xent_train(zh.handle(), lh.handle(), stats.handle(), dzh.handle(), s, s.n,
                                  Where::cuda);
      } else {
        submit_softmax_xent_forward(zh.handle(), lh.handle(), stats.handle(), s, Where::cuda);
        submit_softmax_xent_backward(zh.handle(), lh.handle(), dzh.handle(), s, s.n, Where::cuda);
      }
      const auto got = stats.read();
      EXPECT_NEAR(got[0], want.stats[0], 1e-4f * (1.0f + std::fabs(want.stats[0])));
      EXPECT_EQ(got[1], want.stats[1]);
      testing::expect_near(dzh.read(), want.dz, 1e-5f / float(s.n));
    }
  }
  // Every forward, backward and fused task ran on a CUDA worker; the reduction's add tasks (at
  // most one per read) may run on either kind.
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_GE(counts.cuda_tasks, 3 * int(std::size(kShapes)));
  EXPECT_LE(counts.cpu_tasks, 2 * int(std::size(kShapes)));
  std::printf("[ softmax_xent ] %s: %d tasks on CUDA workers, %d on CPU workers\n",
              GetParam().c_str(), counts.cuda_tasks, counts.cpu_tasks);
}

// Sub-batches alternate between CUDA and CPU workers and reduce into one stats vector: it holds
// the whole batch's loss and count, and the gradients are the whole batch's.
TEST_P(SoftmaxXentCudaTest, SubBatchesOnBothKindsOfWorker) {
  const SoftmaxXentShape whole{120, 10}, part{20, 10};
  const size_t size = size_t(whole.n) * whole.classes;
  const auto z = testing::random_floats(size, 41, -5.0f, 5.0f);
  const auto labels = random_labels(whole.n, whole.classes, 42);
  const CpuResults want = cpu_results(z, labels, whole);

  RegisteredVector zh(z), dzh(size, -7.0f);
  RegisteredIntVector lh(labels);
  Stats stats;
  starpu_data_filter filter{};
  filter.filter_func = starpu_vector_filter_block;
  filter.nchildren = whole.n / part.n;
  for (starpu_data_handle_t h : {zh.handle(), dzh.handle(), lh.handle()})
    starpu_data_partition(h, &filter);
  for (unsigned k = 0; k < filter.nchildren; ++k) {
    const Where where = k % 2 ? Where::cpu : Where::cuda;
    auto sub = [k](starpu_data_handle_t h) { return starpu_data_get_sub_data(h, 1, k); };
    submit_softmax_xent_forward(sub(zh.handle()), sub(lh.handle()), stats.handle(), part, where);
    submit_softmax_xent_backward(sub(zh.handle()), sub(lh.handle()), sub(dzh.handle()), part,
                                 whole.n, where);
  }
  for (starpu_data_handle_t h : {zh.handle(), dzh.handle(), lh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
  const auto got = stats.read();
  EXPECT_NEAR(got[0] / float(whole.n), want.stats[0] / float(whole.n), 1e-5f);
  EXPECT_EQ(got[1], want.stats[1]);
  testing::expect_near(dzh.read(), want.dz, 1e-5f / float(whole.n));
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_GE(counts.cuda_tasks, int(filter.nchildren));
  EXPECT_GE(counts.cpu_tasks, int(filter.nchildren));
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SoftmaxXentCudaTest);

}  // namespace
}  // namespace starcnn
