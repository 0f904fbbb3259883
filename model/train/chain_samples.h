// How many samples a CPU task chain (a micro-batch run on the CPU workers) needs to be worth its
// fixed cost (its tasks' overhead, its gradient slot's share of the end-of-step sums), from the
// network's work per sample.
#pragma once

#include "model/nn/network_spec.h"

#include <cstddef>
#include <cstdint>

namespace starcnn {

// Multiply-adds of one sample's forward pass through the convolutions and linear layers.
int64_t forward_macs_per_sample(const NetworkSpec &spec);

// The fewest samples a CPU chain of `spec` should get: enough for about kCpuChainMacs of forward
// work, between 1 and 16. Measured on the H200's 16 CPU workers (perf/results/h200-2026-12-03-p,
// scheduled chains): lenet (0.65 M MACs a sample) was fastest with chains of 8 samples at batch 64
// (4.07 ms against 5.97 with 16 and 5.87 with 4), wide (153 M) with chains of 4, the fewest
// measured (83.8 ms against 114.3 with 8).
size_t min_samples_per_cpu_chain(const NetworkSpec &spec);
constexpr int64_t kCpuChainMacs = 5'000'000;

// The block that claiming chains (samples:KxB, model/nn/chain_claims.h) take at a time, for
// chains of `chain_samples` or more: half of that, so that a faster worker can take a block more.
inline size_t claim_block_samples(size_t chain_samples) {
  return chain_samples > 1 ? chain_samples / 2 : 1;
}

}  // namespace starcnn
