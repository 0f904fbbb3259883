// --cuda-chain graph|kernels|off, on train and the benchmarks: how a micro-batch whose every layer
// is whole on CUDA trains (TrainConfig::cuda_chain).
#pragma once

#include "apps/cli/args.h"
#include "model/nn/layer_chain.h"

#include <string>

namespace starcnn {

// Adds --cuda-chain to `args`, its value going to *mode (whose value is the default shown).
void add_cuda_chain_option(ArgParser &args, std::string *mode);

// The setting of a value --cuda-chain accepted.
CudaChain parse_cuda_chain(const std::string &mode);

}  // namespace starcnn
