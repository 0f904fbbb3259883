// The preprocessing of a data set's images, shared by the data sets and the checkpoints.
#pragma once

#include <vector>

namespace starcnn {

// What is done to every image: bytes scaled to [0, 1], each side zero-padded by `pad` pixels, then
// each channel c normalised as (x - mean[c]) / stddev[c] (the padding too, so it reads as black).
// Checkpoints record it so that inference preprocesses exactly as training did.
struct Preprocess {
  int pad = 0;
  std::vector<float> mean;    // one per channel
  std::vector<float> stddev;  // one per channel, > 0
};

}  // namespace starcnn
