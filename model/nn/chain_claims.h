// CPU chains that share their samples: a sample split's pinned CPU chains each take blocks of the
// split's samples from one counter until none is left, so that a worker that runs faster does
// more of them. Equal pinned chains waited for the slowest worker, which ran 1.3-2.4x slower than
// the fastest (perf/trace_gaps.py on H100 and H200 sample splits, README "Plans").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace starcnn {

struct ChainClaims {
  // (step << 32) | blocks taken in that step. A step's chains all end before the next step's
  // begin (they read the weights its update writes), so the word never sees two steps at once.
  std::atomic<uint64_t> word{0};
};

// What one chain's task needs to claim blocks (its second argument): the counter, the step the
// task belongs to (from 1, rising), and which of the chains it is.
struct ClaimTicket {
  ChainClaims *claims = nullptr;
  uint64_t step = 0;
  uint32_t own = 0, chains = 0;
};

// The next block of `step`, or `blocks` when every block of it is taken.
uint32_t claim_block(ChainClaims &claims, uint64_t step, uint32_t blocks);

// A claimed block: which chain's samples, and the first of them.
struct ChainBlock {
  uint32_t chain = 0, first = 0, samples = 0;
};

// The blocks of chains of `chain_samples` samples each, `block` samples a block (a chain's last
// one shorter where `block` does not divide it), in order.
std::vector<ChainBlock> chain_blocks(const std::vector<uint32_t> &chain_samples, uint32_t block);

}  // namespace starcnn
