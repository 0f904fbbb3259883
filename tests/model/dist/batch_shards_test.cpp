// shard_batch and parse_rank_shares against hand-derived cuts, and a brute-force check that every
// cut covers the batch once, in rank order, with sizes within one sample of the exact share.
#include "model/dist/batch_shards.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

namespace starcnn {
namespace {

std::vector<size_t> sizes_of(const std::vector<BatchShard> &shards) {
  std::vector<size_t> sizes;
  for (const BatchShard &s : shards) sizes.push_back(s.size);
  return sizes;
}

TEST(CutBatch, EvenAndUnevenCutsByHand) {
  EXPECT_EQ(sizes_of(shard_batch(64, {1, 1})), (std::vector<size_t>{32, 32}));
  // 10 / 3 = 3.33 each: one sample left, to rank 0 (equal remainders go to the lower rank).
  EXPECT_EQ(sizes_of(shard_batch(10, {1, 1, 1})), (std::vector<size_t>{4, 3, 3}));
  // 32 * 3/4 = 24, 32 * 1/4 = 8.
  const std::vector<BatchShard> shards = shard_batch(32, {3, 1});
  EXPECT_EQ(shards[0].first, 0u);
  EXPECT_EQ(shards[0].size, 24u);
  EXPECT_EQ(shards[1].first, 24u);
  EXPECT_EQ(shards[1].size, 8u);
  // 7 * {0.5, 0.3, 0.2} = {3.5, 2.1, 1.4}: floors 3,2,1, the sample left goes to rank 0 (0.5).
  EXPECT_EQ(sizes_of(shard_batch(7, {5, 3, 2})), (std::vector<size_t>{4, 2, 1}));
}

TEST(CutBatch, EverySampleOnceAndNearTheExactShare) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> weight(0.1, 5.0);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t ranks = 1 + rng() % 6;
    const size_t batch = ranks * 8 + rng() % 200;
    std::vector<double> w(ranks);
    double total = 0;
    for (double &x : w) total += (x = weight(rng));
    const std::vector<BatchShard> shards = shard_batch(batch, w);
    ASSERT_EQ(shards.size(), ranks);
    size_t next = 0;
    for (size_t r = 0; r < ranks; ++r) {
      EXPECT_EQ(shards[r].first, next);
      EXPECT_LT(std::fabs(double(shards[r].size) - double(batch) * w[r] / total), 1.0);
      next += shards[r].size;
    }
    EXPECT_EQ(next, batch);
  }
}

TEST(CutBatch, RejectsEmptyShardsAndBadWeights) {
  EXPECT_THROW(shard_batch(2, {1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(shard_batch(8, {1, 0}), std::invalid_argument);
  EXPECT_THROW(shard_batch(8, {}), std::invalid_argument);
}

TEST(ParseRankShares, ReadsOneWeightPerRank) {
  EXPECT_EQ(parse_rank_shares("3,1", 2), (std::vector<double>{3, 1}));
  EXPECT_EQ(parse_rank_shares("0.5,1.5,2", 3), (std::vector<double>{0.5, 1.5, 2}));
  EXPECT_THROW(parse_rank_shares("3,1", 3), std::invalid_argument);
  EXPECT_THROW(parse_rank_shares("3,,1", 3), std::invalid_argument);
  EXPECT_THROW(parse_rank_shares("3,x", 2), std::invalid_argument);
  EXPECT_THROW(parse_rank_shares("-1,1", 2), std::invalid_argument);
}

}  // namespace
}  // namespace starcnn
