// SGD update on CUDA workers against the CPU implementation; skips where StarPU finds no CUDA
// worker.
#include "codelets/sgd.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

// Both kernels do the same float operations in the same order, so they should agree to the bit;
// 1e-6 relative leaves room for a compiler fusing the CPU's multiply-adds.
constexpr double kRelativeTolerance = 1e-6;

class SgdCudaTest : public testing::CudaSchedulerTest {};

TEST_P(SgdCudaTest, StepsOnCudaMatchCpu) {
  const SgdParams settings[] = {
      {0.1f, 0.0f, 0.0f, 0}, {0.05f, 0.9f, 0.0f, 0}, {0.01f, 0.9f, 5e-4f, 0}};
  const size_t sizes[] = {1, 1001, 1 << 20};
  const int steps = 4;
  uint32_t seed = 1;
  int tasks = 0;
  for (const SgdParams &setting : settings)
    for (size_t n : sizes) {
      SCOPED_TRACE("n=" + std::to_string(n) + " momentum=" + std::to_string(setting.momentum));
      const bool momentum = setting.momentum != 0.0f;
      std::vector<float> w = testing::random_floats(n, seed++), buf(n, -7.0f);
      RegisteredVector wh(w), bufh(n, -7.0f);
      std::vector<std::unique_ptr<RegisteredVector>> grads;
      for (int t = 0; t < steps; ++t) {
        const auto g = testing::random_floats(n, seed++);
        grads.push_back(std::make_unique<RegisteredVector>(g));
        SgdParams params = setting;
        params.first_step = t == 0;
        submit_sgd_update(wh.handle(), grads.back()->handle(), momentum ? bufh.handle() : nullptr,
                          params, Where::cuda);
        sgd_update_cpu(w.data(), g.data(), buf.data(), n, params);
        ++tasks;
      }
      testing::expect_close(wh.read(), w, kRelativeTolerance);
      if (momentum) testing::expect_close(bufh.read(), buf, kRelativeTolerance);
    }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
  std::printf("[ sgd ] %s: %d tasks on CUDA workers, %d on CPU workers\n", GetParam().c_str(),
              counts.cuda_tasks, counts.cpu_tasks);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SgdCudaTest);

}  // namespace
}  // namespace starcnn
