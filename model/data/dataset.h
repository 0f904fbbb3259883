// A data set in memory, ready for training: float images [N, C, H, W] after preprocessing and
// int32 labels. Named data sets: "mnist" and "fashion" (IDX files under DATA_DIR/mnist and
// DATA_DIR/fashion, put there by scripts/fetch-data) and "cifar10:DIR" (CIFAR-10 binary batches).
#pragma once

#include "model/data/preprocess.h"
#include "model/data/subset.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

struct Dataset {
  std::string name;  // as given to load_dataset: "mnist", "fashion", "cifar10:DIR"
  Subset subset = Subset::train;
  size_t count = 0;
  size_t channels = 0;
  size_t height = 0;  // after padding
  size_t width = 0;   // after padding
  int num_classes = 0;
  Preprocess preprocess;
  std::vector<float> images;    // [count, channels, height, width]
  std::vector<int32_t> labels;  // [count], each in 0 .. num_classes - 1

  size_t sample_size() const { return channels * height * width; }
};

// Preprocesses byte images [count, channels, height, width] (before padding) and their labels.
// Throws std::invalid_argument when pre does not fit (channel counts, stddev <= 0, pad < 0).
Dataset make_dataset(const uint8_t *pixels, const uint8_t *labels, size_t count, size_t channels,
                     size_t height, size_t width, int num_classes, const Preprocess &pre);

// The preprocessing a named data set gets by default: MNIST and Fashion-MNIST padded 28 -> 32
// (pad 2), every set normalised by the per-channel mean and standard deviation of its training
// images. Throws std::invalid_argument for an unknown name.
Preprocess default_preprocess(const std::string &name);

// $STARCNN_DATA_DIR when set, else "data" (relative to the working directory).
std::string default_data_dir();

// Loads a named data set; errors (missing, corrupt or truncated files) name the file.
Dataset load_dataset(const std::string &name, Subset subset,
                     const std::string &data_dir = default_data_dir());
Dataset load_dataset(const std::string &name, Subset subset, const Preprocess &pre,
                     const std::string &data_dir = default_data_dir());

}  // namespace starcnn
