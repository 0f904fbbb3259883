// How much memory a network needs at a batch size, checked against the machine before anything is
// allocated: a description (or a checkpoint's) may ask for terabytes in three lines.
#pragma once

#include "model/nn/network_spec.h"

#include <cstddef>
#include <string>

namespace starcnn {

// A lower bound of the bytes one copy of the network takes with `batch` samples: its weights
// (with their gradients and momentum when training), the input and every layer's output (and
// their gradients when training), and the class probabilities. A double: the sum may exceed
// 2^64.
double network_memory_bytes(const NetworkSpec &spec, size_t batch, bool training);

// Throws std::invalid_argument when network_memory_bytes exceeds half of the machine's physical
// memory, saying how much it needs, the limit and `what` the batch is ("--batch 64").
void check_network_fits_memory(const NetworkSpec &spec, size_t batch, bool training,
                               const std::string &what);

}  // namespace starcnn
