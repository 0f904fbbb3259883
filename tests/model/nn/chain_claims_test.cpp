// The counter that a sample split's CPU chains claim blocks from: each block of a step goes to
// exactly one claim, however many threads claim at once, and a new step starts from block 0.
#include "model/nn/chain_claims.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace starcnn {
namespace {

TEST(ChainClaims, EachStepHandsOutItsBlocksInOrderThenNone) {
  ChainClaims claims;
  for (uint64_t step : {1u, 2u, 7u}) {
    for (uint32_t b = 0; b < 5; ++b) EXPECT_EQ(claim_block(claims, step, 5), b) << "step " << step;
    EXPECT_EQ(claim_block(claims, step, 5), 5u);
    EXPECT_EQ(claim_block(claims, step, 5), 5u);
  }
  EXPECT_EQ(claim_block(claims, 8, 0), 0u);  // a step without blocks has none to give
}

TEST(ChainClaims, ThreadsClaimingAtOnceTakeEveryBlockOnce) {
  ChainClaims claims;
  constexpr uint32_t kBlocks = 20000;
  constexpr int kThreads = 6;
  for (uint64_t step = 1; step <= 3; ++step) {
    std::vector<std::vector<uint32_t>> taken(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (uint32_t b; (b = claim_block(claims, step, kBlocks)) < kBlocks;)
          taken[size_t(t)].push_back(b);
      });
    for (std::thread &t : threads) t.join();
    std::vector<int> count(kBlocks, 0);
    for (const auto &blocks : taken)
      for (uint32_t b : blocks) ++count[b];
    for (uint32_t b = 0; b < kBlocks; ++b) ASSERT_EQ(count[b], 1) << "block " << b;
  }
}

TEST(ChainClaims, BlocksCoverEveryChainWithShorterLastOnes) {
  const std::vector<ChainBlock> blocks = chain_blocks({5, 2, 4}, 2);
  const std::vector<std::vector<uint32_t>> want = {{0, 0, 2}, {0, 2, 2}, {0, 4, 1},
                                                   {1, 0, 2}, {2, 0, 2}, {2, 2, 2}};
  ASSERT_EQ(blocks.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(blocks[i].chain, want[i][0]) << "block " << i;
    EXPECT_EQ(blocks[i].first, want[i][1]) << "block " << i;
    EXPECT_EQ(blocks[i].samples, want[i][2]) << "block " << i;
  }
  EXPECT_EQ(chain_blocks({3, 3}, 8).size(), 2u);  // a block larger than the chains: one each
  EXPECT_TRUE(chain_blocks({3}, 0).empty());
}

}  // namespace
}  // namespace starcnn
