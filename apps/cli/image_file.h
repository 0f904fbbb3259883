// Reads the image files that infer classifies: PGM (binary P5 and ASCII P2, any maxval, scaled to
// 0..255) and PNG (8-bit grayscale or RGB, not interlaced). PNG is decoded here on zlib, which
// starcnn already needs: the subset is small, and libpng would be one more library to install
// and ship to the GPU machine. Errors name the file and what is wrong with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

struct ImageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Image {
  size_t width = 0, height = 0, channels = 0;  // channels: 1 (gray) or 3 (RGB)
  std::vector<uint8_t> pixels;                 // planar [channels, height, width]
};

// Any side larger than this is refused before allocating (a corrupt header cannot ask for GiBs).
constexpr size_t kMaxImageSide = 16384;

// `source` names the image in errors ("FILE: ...").
Image decode_pgm(const std::vector<uint8_t> &bytes, const std::string &source);
Image decode_png(const std::vector<uint8_t> &bytes, const std::string &source);
// Picks the format from the first bytes, not the file name.
Image decode_image(const std::vector<uint8_t> &bytes, const std::string &source);
Image read_image(const std::string &path);

}  // namespace starcnn
