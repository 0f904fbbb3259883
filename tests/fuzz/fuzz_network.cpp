// Network descriptions: any text parses to layers whose shapes chain, with parameter tensors and
// a memory estimate, or gives an error.
#include "model/nn/network_memory.h"
#include "model/nn/network_spec.h"

#include <cstdlib>

using namespace starcnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    const NetworkSpec spec = parse_network(text, "input");
    ActivationShape shape = spec.input;
    for (const LayerSpec &layer : spec.layers) {
      if (layer.in.size() != shape.size() || layer.out_shape.size() <= 0) std::abort();
      shape = layer.out_shape;
    }
    for (const ParameterSpec &p : parameter_tensors(spec))
      for (int64_t d : p.shape)
        if (d <= 0) std::abort();
    if (!(network_memory_bytes(spec, 64, true) > 0)) std::abort();
    parse_network(spec.text, "again");
  } catch (const NetworkSpecError &) {
  }
  return 0;
}
