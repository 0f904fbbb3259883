// Reads the image files that infer classifies. PNG (every colour type and bit depth, interlaced or
// not), JPEG (baseline and progressive), BMP and binary PPM go through stb_image (Debian's
// libstb-dev, a header only, so the GPU bundle ships no library for it); PGM (binary P5 and ASCII
// P2, any maxval, scaled to 0..255) is read here, as stb_image has no P2 and does not scale maxval.
// The header is read first: an image whose size is not the expected one is refused before any
// pixel is decoded. Pixels come out with the expected channel count (gray to RGB by copying,
// RGB to gray as luma, alpha dropped). Errors name the file and what is wrong with it.
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

// What the caller takes: the data set's image size and channels (1: gray, 3: RGB).
struct ImageShape {
  size_t width = 0, height = 0, channels = 1;
};

struct Image {
  size_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // planar [channels, height, width]
};

// Image files are read whole; a larger one is refused without reading it.
constexpr size_t kMaxImageFileBytes = size_t(64) << 20;

// Picks the format from the first bytes, not the file name. `source` names the image in errors
// ("FILE: ...").
Image decode_image(const std::vector<uint8_t> &bytes, const std::string &source,
                   const ImageShape &want);
// Reads a regular file (a FIFO, device or directory is refused before reading) of at most
// kMaxImageFileBytes and decodes it.
Image read_image(const std::string &path, const ImageShape &want);

}  // namespace starcnn
