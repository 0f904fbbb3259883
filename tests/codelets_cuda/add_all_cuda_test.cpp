// The one-task sum of several vectors on a CUDA worker against the CPU kernel; skips where StarPU
// finds no CUDA worker.
#include "codelets/accumulate.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

class AddAllCudaTest : public testing::CudaSchedulerTest {};

// Sources that live in RAM (as a sample split's CPU micro-batches leave them) summed on CUDA.
TEST_P(AddAllCudaTest, SumOnCudaMatchesCpu) {
  uint32_t seed = 1;
  int tasks = 0;
  for (size_t n : {size_t(1), size_t(1001), size_t(1) << 20})
    for (size_t count : {1, 9}) {
      SCOPED_TRACE("n=" + std::to_string(n) + ", " + std::to_string(count) + " sources");
      std::vector<float> want = testing::random_floats(n, seed++);
      RegisteredVector dst(want);
      std::vector<std::unique_ptr<RegisteredVector>> srcs;
      std::vector<starpu_data_handle_t> handles;
      std::vector<const float *> pointers;
      std::vector<std::vector<float>> values;
      for (size_t s = 0; s < count; ++s) {
        values.push_back(testing::random_floats(n, seed++));
        srcs.push_back(std::make_unique<RegisteredVector>(values.back()));
        handles.push_back(srcs.back()->handle());
      }
      for (const auto &v : values) pointers.push_back(v.data());
      add_all_cpu(want.data(), pointers.data(), count, n);
      submit_add_all(dst.handle(), handles, Where::cuda);
      ++tasks;
      // The same float additions in the same order: equal but for fused or reordered ops.
      testing::expect_close(dst.read(), want, 1e-6);
    }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(AddAllCudaTest);

}  // namespace
}  // namespace starcnn
