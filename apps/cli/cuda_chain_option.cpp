#include "apps/cli/cuda_chain_option.h"

namespace starcnn {

void add_cuda_chain_option(ArgParser &args, std::string *mode) {
  args.add_choice("cuda-chain", {"graph", "kernels", "off"},
                  "a micro-batch whose every layer is whole on CUDA (with fusion on): its whole "
                  "training pass as one task, its kernels replayed as a CUDA graph (graph) or "
                  "launched one by one (kernels), or one task per layer and pass (off)",
                  mode);
}

CudaChain parse_cuda_chain(const std::string &mode) {
  return mode == "off" ? CudaChain::off : mode == "kernels" ? CudaChain::kernels : CudaChain::graph;
}

}  // namespace starcnn
