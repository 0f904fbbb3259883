// Readers of the IDX files of MNIST and Fashion-MNIST: unsigned-byte images [N, rows, cols]
// (magic 2051) and unsigned-byte labels [N] (magic 2049), all header words big-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

constexpr uint32_t kIdxImagesMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
constexpr uint32_t kIdxLabelsMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension

struct IdxImages {
  size_t count = 0;
  size_t rows = 0;
  size_t cols = 0;
  std::vector<uint8_t> pixels;  // [count, rows, cols], row-major
};

// Throws std::runtime_error naming the file when it is missing, has a bad magic number, images of
// another size than rows x cols, or a size that does not match its header (truncated or trailing).
IdxImages read_idx_images(const std::string &path, size_t rows = 28, size_t cols = 28);
std::vector<uint8_t> read_idx_labels(const std::string &path);

}  // namespace starcnn
