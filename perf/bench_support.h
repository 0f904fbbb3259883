// Pieces shared by the training benchmarks (train_benchmark, split_sweep).
#pragma once

#include "model/data/dataset.h"
#include "model/nn/network_spec.h"

#include <cstdint>
#include <vector>

namespace starcnn {

// `count` random images of the network's input shape with random labels of 10 classes, normalised
// like a real data set (mean 0.5, std 0.25 per channel), so no data file is needed.
Dataset random_dataset(const NetworkSpec &spec, size_t count, uint64_t seed);

// The median of `values` (the mean of the middle two for an even count).
double median(std::vector<double> values);

}  // namespace starcnn
