#include "model/nn/chain_claims.h"

namespace starcnn {

uint32_t claim_block(ChainClaims &claims, uint64_t step, uint32_t blocks) {
  uint64_t word = claims.word.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t taken = (word >> 32) == step ? (word & 0xffffffffu) : 0;
    if (taken >= blocks) return blocks;
    if (claims.word.compare_exchange_weak(word, (step << 32) | (taken + 1),
                                          std::memory_order_relaxed))
      return uint32_t(taken);
  }
}

std::vector<ChainBlock> chain_blocks(const std::vector<uint32_t> &chain_samples, uint32_t block) {
  std::vector<ChainBlock> blocks;
  if (block == 0) return blocks;
  for (uint32_t c = 0; c < chain_samples.size(); ++c)
    for (uint32_t first = 0; first < chain_samples[c]; first += block)
      blocks.push_back({c, first, std::min(block, chain_samples[c] - first)});
  return blocks;
}

}  // namespace starcnn
