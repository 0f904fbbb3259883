#include "model/train/chain_samples.h"

#include <algorithm>

namespace starcnn {

int64_t forward_macs_per_sample(const NetworkSpec &spec) {
  int64_t macs = 0;
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind == LayerKind::conv)
      macs += layer.out_shape.size() * int64_t(layer.in.c) * layer.kernel * layer.kernel;
    else if (layer.kind == LayerKind::linear)
      macs += layer.in.size() * int64_t(layer.out);
  }
  return macs;
}

size_t min_samples_per_cpu_chain(const NetworkSpec &spec) {
  const int64_t macs = std::max<int64_t>(1, forward_macs_per_sample(spec));
  return size_t(std::clamp<int64_t>((kCpuChainMacs + macs - 1) / macs, 1, 16));
}

}  // namespace starcnn
