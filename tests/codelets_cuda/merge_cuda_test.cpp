// Merge and split on CUDA workers against the CPU implementation; skips without a CUDA worker.
#include "codelets/merge.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

class MergeCudaTest : public testing::CudaSchedulerTest {};

TEST_P(MergeCudaTest, MergeAndSplitOnCudaMatchCpu) {
  // Eleven parts: more than StarPU's 8 static buffers of a task.
  const std::vector<uint32_t> channels = {3, 5, 1, 2, 7, 1, 1, 4, 2, 1, 3};
  const uint32_t n = 5, hw = 121;
  const MergeShape shape = make_merge_shape(n, hw, channels);
  std::vector<std::vector<float>> parts;
  std::vector<std::unique_ptr<RegisteredVector>> part_h, back_h;
  std::vector<starpu_data_handle_t> ph, bh;
  std::vector<const float *> part_ptrs;
  for (size_t p = 0; p < channels.size(); ++p) {
    parts.push_back(testing::random_floats(shape.part_count(uint32_t(p)), uint32_t(p) + 7));
    part_ptrs.push_back(parts.back().data());
    part_h.push_back(std::make_unique<RegisteredVector>(parts.back()));
    back_h.push_back(std::make_unique<RegisteredVector>(parts.back().size(), -7.0f));
    ph.push_back(part_h.back()->handle());
    bh.push_back(back_h.back()->handle());
  }
  std::vector<float> want(shape.whole_count());
  merge_cpu(shape, part_ptrs.data(), want.data());

  RegisteredVector whole(shape.whole_count(), -7.0f);
  submit_merge(ph, whole.handle(), shape, Where::cuda);
  submit_split(whole.handle(), bh, shape, Where::cuda);
  EXPECT_EQ(whole.read(), want);
  for (size_t p = 0; p < parts.size(); ++p) EXPECT_EQ(back_h[p]->read(), parts[p]) << "part " << p;
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, 2);
  EXPECT_EQ(counts.cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(MergeCudaTest);

}  // namespace
}  // namespace starcnn
