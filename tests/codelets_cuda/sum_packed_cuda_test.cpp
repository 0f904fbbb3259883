// The packed sum on a CUDA worker against the CPU kernel on the same vectors: the same additions
// in the same order, so the same bits (a sample split's two sides update from these sums). Skips
// where StarPU finds no CUDA worker.
#include "codelets/sum_packed.h"

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

class SumPackedCudaTest : public testing::CudaSchedulerTest {};

// Groups of lengths 1 to 70000, 1 (a copy), 5 and 70 vectors each (70: more than one kernel's
// table of sources, so the sum runs in passes), and more groups than one launch takes.
TEST_P(SumPackedCudaTest, MatchesTheCpuToTheBit) {
  std::vector<size_t> lengths = {1, 450, 70000, 6, 2400};
  for (size_t g = 0; lengths.size() < 40; ++g) lengths.push_back(1 + 53 * g);
  uint32_t seed = 11;
  int tasks = 0;
  for (size_t per_group : {1, 5, 70}) {
    SCOPED_TRACE(std::to_string(per_group) + " vectors a group");
    const size_t groups_used = per_group == 70 ? 3 : lengths.size();
    std::vector<std::vector<std::vector<float>>> values(groups_used);
    std::vector<std::unique_ptr<RegisteredVector>> held;
    std::vector<std::vector<starpu_data_handle_t>> groups(groups_used);
    std::vector<std::vector<const float *>> pointers(groups_used);
    size_t total = 0;
    for (size_t g = 0; g < groups_used; ++g) {
      for (size_t s = 0; s < per_group; ++s) {
        values[g].push_back(testing::random_floats(lengths[g], seed++));
        held.push_back(std::make_unique<RegisteredVector>(values[g].back()));
        groups[g].push_back(held.back()->handle());
      }
      for (const auto &v : values[g]) pointers[g].push_back(v.data());
      total += lengths[g];
    }
    std::vector<const float *const *> group_ptrs;
    for (const auto &p : pointers) group_ptrs.push_back(p.data());
    std::vector<float> want(total);
    sum_packed_cpu(want.data(), group_ptrs.data(), groups_used, per_group, lengths.data());
    RegisteredVector packed(total, -5.0f);
    submit_sum_packed(groups, packed.handle(), Where::cuda);
    ++tasks;
    EXPECT_EQ(testing::count_bit_differences(packed.read().data(), want.data(), total), 0u)
        << "of " << total;
  }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SumPackedCudaTest);

}  // namespace
}  // namespace starcnn
