// Batcher: every sample once per epoch, seeded reproducible shuffles, exact batch contents.
#include "model/data/batcher.h"

#include <gtest/gtest.h>

#include <map>

namespace starcnn {
namespace {

// Sample i has label i and pixels i + k / 8 (exact in float), so a batch tells which samples it
// holds and whether their pixels travelled with them.
Dataset numbered_dataset(size_t count) {
  Dataset data;
  data.count = count;
  data.channels = 2;
  data.height = 1;
  data.width = 3;
  data.num_classes = int(count);
  for (size_t i = 0; i < count; ++i) {
    data.labels.push_back(int32_t(i));
    for (size_t k = 0; k < data.sample_size(); ++k) data.images.push_back(float(i) + float(k) / 8);
  }
  return data;
}

// Sample indices of one epoch, batch after batch, checking each batch's pixels and sizes.
std::vector<size_t> run_epoch(const Batcher &batcher, const Dataset &data, size_t batch_size) {
  std::vector<size_t> seen;
  for (size_t b = 0; b < batcher.batch_count(); ++b) {
    const Batch batch = batcher.batch(b);
    EXPECT_EQ(batch.size, batcher.batch_size(b));
    EXPECT_LE(batch.size, batch_size);
    EXPECT_EQ(batch.labels.size(), batch.size);
    EXPECT_EQ(batch.images.size(), batch.size * data.sample_size());
    for (size_t i = 0; i < batch.size; ++i) {
      const size_t sample = size_t(batch.labels[i]);
      for (size_t k = 0; k < data.sample_size(); ++k)
        EXPECT_EQ(batch.images[i * data.sample_size() + k], float(sample) + float(k) / 8);
      seen.push_back(sample);
    }
  }
  return seen;
}

TEST(Batcher, KeepLastCoversEverySampleOnce) {
  const Dataset data = numbered_dataset(103);
  Batcher batcher(data, {10, true, 42, false});
  ASSERT_EQ(batcher.batch_count(), 11u);
  EXPECT_EQ(batcher.batch_size(0), 10u);
  EXPECT_EQ(batcher.batch_size(10), 3u);
  EXPECT_THROW(batcher.batch_size(11), std::out_of_range);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    batcher.start_epoch(epoch);
    std::map<size_t, int> times;
    for (size_t s : run_epoch(batcher, data, 10)) ++times[s];
    ASSERT_EQ(times.size(), 103u);
    for (const auto &[sample, n] : times) EXPECT_EQ(n, 1) << "sample " << sample;
  }
}

TEST(Batcher, DropLastDropsOnlyThePartialBatch) {
  const Dataset data = numbered_dataset(103);
  Batcher batcher(data, {10, true, 42, true});
  ASSERT_EQ(batcher.batch_count(), 10u);
  const auto seen = run_epoch(batcher, data, 10);
  EXPECT_EQ(seen.size(), 100u);
  std::map<size_t, int> times;
  for (size_t s : seen) ++times[s];
  EXPECT_EQ(times.size(), 100u);  // no repeats
  // The dropped ones are the last three of this epoch's order.
  for (size_t i = 100; i < 103; ++i) EXPECT_EQ(times.count(batcher.order()[i]), 0u);

  // An exact multiple loses nothing.
  const Dataset even = numbered_dataset(40);
  EXPECT_EQ(Batcher(even, {10, true, 1, true}).batch_count(), 4u);
  EXPECT_EQ(Batcher(even, {10, true, 1, false}).batch_count(), 4u);
  // Fewer samples than one batch.
  EXPECT_EQ(Batcher(numbered_dataset(3), {10, true, 1, true}).batch_count(), 0u);
  EXPECT_EQ(Batcher(numbered_dataset(3), {10, true, 1, false}).batch_count(), 1u);
}

TEST(Batcher, SeedMakesOrderReproducible) {
  const Dataset data = numbered_dataset(500);
  Batcher a(data, {32, true, 7, false}), b(data, {32, true, 7, false}),
      c(data, {32, true, 8, false});
  EXPECT_EQ(run_epoch(a, data, 32), run_epoch(b, data, 32));
  EXPECT_NE(a.order(), c.order());  // another seed
  const auto epoch0 = a.order();
  a.start_epoch(1);
  EXPECT_NE(a.order(), epoch0);  // another epoch
  // A batcher that jumps straight to epoch 1 agrees: a resumed run sees the same order.
  Batcher resumed(data, {32, true, 7, false});
  resumed.start_epoch(1);
  EXPECT_EQ(resumed.order(), a.order());
  a.start_epoch(0);
  EXPECT_EQ(a.order(), epoch0);
}

TEST(Batcher, ShuffledOrderIsUnbiased) {
  // 24000 shuffles of 4 items: each of the 24 permutations should appear about 1000 times
  // (binomial sd about 31). A biased shuffle (for example swapping with any index, not only
  // those below) is far outside these bounds.
  std::map<std::vector<size_t>, int> counts;
  for (uint64_t s = 0; s < 24000; ++s) ++counts[shuffled_order(4, s, s % 3)];
  EXPECT_EQ(counts.size(), 24u);
  for (const auto &[perm, n] : counts) {
    EXPECT_GT(n, 850);
    EXPECT_LT(n, 1150);
  }
}

TEST(Batcher, WithoutShuffleKeepsDataOrder) {
  const Dataset data = numbered_dataset(25);
  Batcher batcher(data, {8, false, 3, false});
  std::vector<size_t> identity(25);
  for (size_t i = 0; i < 25; ++i) identity[i] = i;
  EXPECT_EQ(run_epoch(batcher, data, 8), identity);
  batcher.start_epoch(5);
  EXPECT_EQ(run_epoch(batcher, data, 8), identity);
}

TEST(Batcher, FillWritesCallerBuffers) {
  const Dataset data = numbered_dataset(50);
  Batcher batcher(data, {16, true, 11, false});
  for (size_t b = 0; b < batcher.batch_count(); ++b) {
    const size_t n = batcher.batch_size(b);
    std::vector<float> images(16 * data.sample_size() + 1, -7.0f);  // poisoned, one spare
    std::vector<int32_t> labels(17, -7);
    batcher.fill(b, images.data(), labels.data());
    for (size_t i = 0; i < n; ++i) {
      const size_t sample = batcher.order()[b * 16 + i];
      EXPECT_EQ(labels[i], int32_t(sample));
      for (size_t k = 0; k < data.sample_size(); ++k)
        EXPECT_EQ(images[i * data.sample_size() + k], float(sample) + float(k) / 8);
    }
    // Nothing written beyond the batch.
    for (size_t i = n * data.sample_size(); i < images.size(); ++i) EXPECT_EQ(images[i], -7.0f);
    for (size_t i = n; i < labels.size(); ++i) EXPECT_EQ(labels[i], -7);
  }
}

TEST(Batcher, ZeroBatchSizeIsRejected) {
  const Dataset data = numbered_dataset(5);
  EXPECT_THROW(Batcher(data, {0, true, 1, false}), std::invalid_argument);
}

}  // namespace
}  // namespace starcnn
