// Reader of the CIFAR-10 binary format: data_batch_1.bin .. data_batch_5.bin (training) and
// test_batch.bin, each a sequence of records of 1 label byte (0..9) and 3072 pixel bytes
// (red, green, blue planes of 32x32, row-major).
#pragma once

#include "model/data/subset.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

constexpr size_t kCifar10Channels = 3;
constexpr size_t kCifar10Side = 32;
constexpr size_t kCifar10RecordSize = 1 + kCifar10Channels * kCifar10Side * kCifar10Side;

struct Cifar10Images {
  size_t count = 0;
  std::vector<uint8_t> labels;  // [count]
  std::vector<uint8_t> pixels;  // [count, 3, 32, 32]
};

// One batch file. Throws std::runtime_error naming the file when it is missing, empty, not a whole
// number of records (truncated) or holds a label outside 0..9 (corrupt).
Cifar10Images read_cifar10_file(const std::string &path);

// The training set (the five data_batch_N.bin, in order) or the test set (test_batch.bin) of the
// folder dir.
Cifar10Images read_cifar10(const std::string &dir, Subset subset);

}  // namespace starcnn
