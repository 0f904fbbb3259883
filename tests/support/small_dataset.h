// A small data set of random pixels and labels for the training tests (make_dataset's input as a
// reader would give it), seeded so that a failure can be replayed.
#pragma once

#include "model/data/dataset.h"

#include <cstdint>
#include <random>
#include <vector>

namespace starcnn::testing {

inline Dataset small_dataset(size_t count, size_t channels, size_t height, size_t width,
                             int classes, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> pixels(count * channels * height * width), labels(count);
  for (uint8_t &p : pixels) p = uint8_t(gen() % 256);
  for (uint8_t &l : labels) l = uint8_t(gen() % uint32_t(classes));
  Preprocess pre;
  pre.mean.assign(channels, 0.5f);
  pre.stddev.assign(channels, 0.25f);
  return make_dataset(pixels.data(), labels.data(), count, channels, height, width, classes, pre);
}

}  // namespace starcnn::testing
