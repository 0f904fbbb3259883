// Merge and split along channels on CPU workers, against index arithmetic written in the test.
#include "codelets/merge.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/vector_partition.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

// Element (i, c, j) of the whole [n, C, hw] comes from part p at (i, c - first channel of p, j).
std::vector<float> reference_merge(const std::vector<std::vector<float>> &parts,
                                   const std::vector<uint32_t> &channels, uint32_t n, uint32_t hw) {
  const uint32_t total = std::accumulate(channels.begin(), channels.end(), 0u);
  std::vector<float> whole(size_t(n) * total * hw);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t c = 0;
    for (size_t p = 0; p < parts.size(); ++p)
      for (uint32_t cp = 0; cp < channels[p]; ++cp, ++c)
        for (uint32_t j = 0; j < hw; ++j)
          whole[(size_t(i) * total + c) * hw + j] =
              parts[p][(size_t(i) * channels[p] + cp) * hw + j];
  }
  return whole;
}

class MergeTest : public testing::CpuSchedulerTest {};

struct Case {
  uint32_t n, hw;
  std::vector<uint32_t> channels;
};

// Includes one part, batch 1, 1x1 planes, and more parts (11) than StarPU's 8 static buffers.
const std::vector<Case> kCases = {
    {2, 25, {6}},
    {1, 7, {1, 2}},
    {3, 1, {4, 1, 3}},
    {4, 49, {3, 5, 1, 2, 7, 1, 1, 4, 2, 1, 3}},
};

TEST_P(MergeTest, MergeAndSplitMatchReference) {
  uint32_t seed = 1;
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::to_string(c.channels.size()) + " parts");
    const MergeShape shape = make_merge_shape(c.n, c.hw, c.channels);
    std::vector<std::vector<float>> parts;
    std::vector<std::unique_ptr<RegisteredVector>> part_h, back_h;
    std::vector<starpu_data_handle_t> ph, bh;
    for (uint32_t ch : c.channels) {
      parts.push_back(testing::random_floats(size_t(c.n) * ch * c.hw, seed++));
      part_h.push_back(std::make_unique<RegisteredVector>(parts.back()));
      back_h.push_back(std::make_unique<RegisteredVector>(parts.back().size(), -7.0f));
      ph.push_back(part_h.back()->handle());
      bh.push_back(back_h.back()->handle());
    }
    RegisteredVector whole(shape.whole_count(), -7.0f);
    submit_merge(ph, whole.handle(), shape);
    submit_split(whole.handle(), bh, shape);
    EXPECT_EQ(whole.read(), reference_merge(parts, c.channels, c.n, c.hw));
    for (size_t p = 0; p < parts.size(); ++p)
      EXPECT_EQ(back_h[p]->read(), parts[p]) << "part " << p;
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 2 * int(kCases.size()));
}

// Sub-batches of the whole and of every part, one merge task each, fill the whole.
TEST_P(MergeTest, SubBatchesCoverTheWhole) {
  const std::vector<uint32_t> channels = {2, 5, 3}, samples = {2, 1, 3};
  const uint32_t n = 6, hw = 9;
  std::vector<std::vector<float>> parts;
  std::vector<std::unique_ptr<RegisteredVector>> part_h;
  std::vector<std::vector<starpu_data_handle_t>> sub_parts(samples.size());
  for (uint32_t ch : channels) {
    parts.push_back(testing::random_floats(size_t(n) * ch * hw, ch));
    part_h.push_back(std::make_unique<RegisteredVector>(parts.back()));
    std::vector<uint32_t> len;
    for (uint32_t s : samples) len.push_back(s * ch * hw);
    const auto subs = testing::partition_vector(part_h.back()->handle(), len);
    for (size_t i = 0; i < samples.size(); ++i) sub_parts[i].push_back(subs[i]);
  }
  RegisteredVector whole(size_t(n) * 10 * hw, -7.0f);
  std::vector<uint32_t> len;
  for (uint32_t s : samples) len.push_back(s * 10 * hw);
  const auto sub_whole = testing::partition_vector(whole.handle(), len);
  for (size_t i = 0; i < samples.size(); ++i)
    submit_merge(sub_parts[i], sub_whole[i], make_merge_shape(samples[i], hw, channels));
  starpu_data_unpartition(whole.handle(), STARPU_MAIN_RAM);
  for (auto &h : part_h) starpu_data_unpartition(h->handle(), STARPU_MAIN_RAM);
  EXPECT_EQ(whole.read(), reference_merge(parts, channels, n, hw));
}

TEST_P(MergeTest, BadShapesAreRefused) {
  EXPECT_THROW(make_merge_shape(1, 1, {}), std::invalid_argument);
  EXPECT_THROW(make_merge_shape(1, 1, {2, 0}), std::invalid_argument);
  EXPECT_THROW(make_merge_shape(1, 1, std::vector<uint32_t>(kMaxMergeParts + 1, 1)),
               std::invalid_argument);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(MergeTest);

}  // namespace
}  // namespace starcnn
