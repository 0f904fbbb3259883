// --cpu-chains auto|pinned|scheduled, on train and the benchmarks: whether the CPU micro-batches of
// a step each run on a CPU worker of their own (TrainConfig::pin_cpu_chains).
#pragma once

#include "apps/cli/args.h"
#include "model/train/trainer.h"

#include <string>

namespace starcnn {

// Adds --cpu-chains to `args`, its value going to *mode (whose value is the default shown).
void add_cpu_chains_option(ArgParser &args, std::string *mode);

// The setting of a value --cpu-chains accepted.
CpuChains parse_cpu_chains(const std::string &mode);

}  // namespace starcnn
