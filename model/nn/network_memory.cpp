#include "model/nn/network_memory.h"

#include "model/io/regular_file.h"

#include <cstdio>
#include <stdexcept>

namespace starcnn {

namespace {

std::string gigabytes(double bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
  return text;
}

}  // namespace

double network_memory_bytes(const NetworkSpec &spec, size_t batch, bool training) {
  double weights = 0;
  for (const ParameterSpec &p : parameter_tensors(spec)) {
    double elements = 1;
    for (int64_t d : p.shape) elements *= double(d);
    weights += elements;
  }
  double activations = double(spec.input.size());
  for (const LayerSpec &layer : spec.layers) activations += double(layer.out_shape.size());
  activations += double(spec.output().size());    // the probabilities
  const double copies = training ? 2 : 1;         // values and gradients
  const double weight_copies = training ? 3 : 1;  // weights, gradients, momentum
  return 4.0 * (weight_copies * weights + copies * activations * double(batch));
}

void check_network_fits_memory(const NetworkSpec &spec, size_t batch, bool training,
                               const std::string &what) {
  const double need = network_memory_bytes(spec, batch, training);
  const double limit = double(physical_memory_bytes()) / 2;
  if (need > limit)
    throw std::invalid_argument(spec.source + " needs at least " + gigabytes(need) +
                                " of memory at " + what + " (weights and activations" +
                                (training ? " with their gradients" : "") + "), more than the " +
                                gigabytes(limit) + " allowed (half of this machine's memory)");
}

}  // namespace starcnn
