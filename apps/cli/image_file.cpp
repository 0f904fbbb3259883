#include "apps/cli/image_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace starcnn {
namespace {

[[noreturn]] void fail(const std::string &source, const std::string &what) {
  throw ImageError(source + ": " + what);
}

void check_sides(size_t width, size_t height, const std::string &source) {
  if (width == 0 || height == 0)
    fail(source,
         "the image is empty (" + std::to_string(width) + "x" + std::to_string(height) + ")");
  if (width > kMaxImageSide || height > kMaxImageSide)
    fail(source, "the image is too large (" + std::to_string(width) + "x" + std::to_string(height) +
                     ", at most " + std::to_string(kMaxImageSide) + " a side)");
}

// --- PGM -----------------------------------------------------------------------------------

class PgmScanner {
 public:
  PgmScanner(const std::vector<uint8_t> &bytes, const std::string &source)
      : bytes_(bytes), source_(source) {}

  // A decimal number after whitespace and '#' comments; `what` names it in errors.
  unsigned long number(const char *what) {
    skip_space();
    if (pos_ >= bytes_.size()) fail(source_, std::string("truncated: no ") + what);
    if (bytes_[pos_] < '0' || bytes_[pos_] > '9')
      fail(source_, std::string("expected the ") + what + ", found '" + char(bytes_[pos_]) + "'");
    unsigned long value = 0;
    while (pos_ < bytes_.size() && bytes_[pos_] >= '0' && bytes_[pos_] <= '9') {
      value = value * 10 + unsigned(bytes_[pos_++] - '0');
      if (value > 1000000000ul) fail(source_, std::string("the ") + what + " is too large");
    }
    return value;
  }
  // The single whitespace byte that ends a binary PGM's header.
  void header_end() {
    if (pos_ >= bytes_.size() || !is_space(bytes_[pos_]))
      fail(source_, "no whitespace after the header");
    ++pos_;
  }
  size_t pos() const { return pos_; }

 private:
  static bool is_space(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  }
  void skip_space() {
    while (pos_ < bytes_.size()) {
      if (bytes_[pos_] == '#') {
        while (pos_ < bytes_.size() && bytes_[pos_] != '\n' && bytes_[pos_] != '\r') ++pos_;
      } else if (is_space(bytes_[pos_])) {
        ++pos_;
      } else {
        break;
      }
    }
  }
  const std::vector<uint8_t> &bytes_;
  const std::string &source_;
  size_t pos_ = 2;  // after the magic
};

// --- PNG -----------------------------------------------------------------------------------

constexpr uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

uint32_t big_endian(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return uint8_t(a);
  return uint8_t(pb <= pc ? b : c);
}

// Inflates the zlib stream into exactly `expected` bytes.
std::vector<uint8_t> inflate_exactly(const std::vector<uint8_t> &data, size_t expected,
                                     const std::string &source) {
  std::vector<uint8_t> out(expected + 1);  // one spare byte detects too much data
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) fail(source, "zlib failed to start");
  stream.next_in = const_cast<Bytef *>(data.data());
  stream.avail_in = uInt(data.size());
  stream.next_out = out.data();
  stream.avail_out = uInt(out.size());
  const int ret = inflate(&stream, Z_FINISH);
  const size_t produced = out.size() - stream.avail_out;
  const std::string message = stream.msg ? stream.msg : "bad data";
  inflateEnd(&stream);
  if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
    fail(source, "corrupt compressed image data (zlib: " + message + ")");
  if (produced > expected)
    fail(source, "the compressed image data holds more than the " + std::to_string(expected) +
                     " bytes the header needs");
  if (produced < expected)
    fail(source, "the compressed image data holds only " + std::to_string(produced) +
                     " bytes, the header needs " + std::to_string(expected));
  if (ret != Z_STREAM_END) fail(source, "the compressed image data is cut short");
  out.resize(expected);
  return out;
}

}  // namespace

Image decode_pgm(const std::vector<uint8_t> &bytes, const std::string &source) {
  if (bytes.size() < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '2'))
    fail(source, "not a PGM file (no P5 or P2 magic)");
  const bool binary = bytes[1] == '5';
  PgmScanner scan(bytes, source);
  Image image;
  image.width = scan.number("width");
  image.height = scan.number("height");
  const unsigned long maxval = scan.number("maxval");
  check_sides(image.width, image.height, source);
  if (maxval == 0 || maxval > 65535)
    fail(source, "maxval must be 1 to 65535, got " + std::to_string(maxval));
  image.channels = 1;
  const size_t count = image.width * image.height;
  image.pixels.resize(count);
  auto scaled = [&](unsigned long value) {
    if (value > maxval)
      fail(source,
           "pixel value " + std::to_string(value) + " exceeds maxval " + std::to_string(maxval));
    return uint8_t((value * 255 + maxval / 2) / maxval);
  };
  if (binary) {
    scan.header_end();
    const size_t width = maxval < 256 ? 1 : 2;
    const size_t available = bytes.size() - scan.pos();
    if (available < count * width)
      fail(source, "truncated: " + std::to_string(available) + " bytes of pixels, " +
                       std::to_string(image.width) + "x" + std::to_string(image.height) +
                       " needs " + std::to_string(count * width));
    const uint8_t *p = bytes.data() + scan.pos();
    for (size_t i = 0; i < count; ++i)
      image.pixels[i] = scaled(width == 1 ? p[i] : unsigned(p[2 * i]) << 8 | p[2 * i + 1]);
  } else {
    for (size_t i = 0; i < count; ++i) image.pixels[i] = scaled(scan.number("pixel value"));
  }
  return image;
}

Image decode_png(const std::vector<uint8_t> &bytes, const std::string &source) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), png_signature, 8) != 0)
    fail(source, "not a PNG file (bad signature)");
  Image image;
  size_t pos = 8;
  bool header = false, end = false;
  std::vector<uint8_t> compressed;
  while (!end) {
    if (bytes.size() - pos < 12) fail(source, "truncated: the PNG has no IEND chunk");
    const uint32_t length = big_endian(&bytes[pos]);
    const std::string type(reinterpret_cast<const char *>(&bytes[pos + 4]), 4);
    if (length > bytes.size() - pos - 12)
      fail(source, "truncated: chunk " + type + " claims " + std::to_string(length) + " bytes");
    const uint8_t *data = &bytes[pos + 8];
    const uLong crc = crc32(crc32(0, nullptr, 0), &bytes[pos + 4], uInt(length + 4));
    if (crc != big_endian(data + length)) fail(source, "chunk " + type + " fails its CRC check");
    pos += 12 + size_t(length);
    if (!header && type != "IHDR") fail(source, "the PNG does not start with an IHDR chunk");
    if (type == "IHDR") {
      if (header || length != 13) fail(source, "bad IHDR chunk");
      header = true;
      image.width = big_endian(data);
      image.height = big_endian(data + 4);
      const int depth = data[8], color = data[9];
      check_sides(image.width, image.height, source);
      if (color != 0 && color != 2)
        fail(source, "PNG color type " + std::to_string(color) + " (" +
                         (color == 3   ? "palette"
                          : color == 4 ? "gray with alpha"
                                       : "RGBA") +
                         ") is not supported: 8-bit grayscale or RGB only");
      if (depth != 8)
        fail(source, "PNG bit depth " + std::to_string(depth) +
                         " is not supported: 8-bit grayscale or RGB only");
      if (data[10] != 0 || data[11] != 0) fail(source, "unknown PNG compression or filter method");
      if (data[12] != 0) fail(source, "interlaced PNG is not supported");
      image.channels = color == 0 ? 1 : 3;
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), data, data + length);
    } else if (type == "IEND") {
      end = true;
    } else if (type != "PLTE" && !(type[0] & 0x20)) {
      fail(source, "unknown critical PNG chunk " + type);
    }  // ancillary chunks (lower-case first letter) carry nothing we need
  }
  if (compressed.empty()) fail(source, "the PNG has no IDAT chunk");
  const size_t stride = image.width * image.channels;
  const std::vector<uint8_t> raw = inflate_exactly(compressed, image.height * (stride + 1), source);

  // Undo each row's filter; bpp = channels for 8-bit samples.
  std::vector<uint8_t> rows(image.height * stride);
  const size_t bpp = image.channels;
  for (size_t y = 0; y < image.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t *in = &raw[y * (stride + 1) + 1];
    uint8_t *row = &rows[y * stride];
    const uint8_t *up = y > 0 ? row - stride : nullptr;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? row[x - bpp] : 0, b = up ? up[x] : 0;
      const int c = up && x >= bpp ? up[x - bpp] : 0;
      int predictor = 0;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4:
          predictor = paeth(a, b, c);
          break;
        default:
          fail(source, "row " + std::to_string(y) + " has unknown PNG filter type " +
                           std::to_string(filter));
      }
      row[x] = uint8_t(in[x] + predictor);
    }
  }
  // Interleaved RGB to planar.
  image.pixels.resize(rows.size());
  const size_t plane = image.width * image.height;
  for (size_t i = 0; i < plane; ++i)
    for (size_t ch = 0; ch < image.channels; ++ch)
      image.pixels[ch * plane + i] = rows[i * image.channels + ch];
  return image;
}

Image decode_image(const std::vector<uint8_t> &bytes, const std::string &source) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), png_signature, 8) == 0)
    return decode_png(bytes, source);
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '2'))
    return decode_pgm(bytes, source);
  if (bytes.empty()) fail(source, "the file is empty");
  fail(source, "not a PGM (P5 or P2) or PNG file");
}

Image read_image(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open (" + std::string(std::strerror(errno)) + ")");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");
  return decode_image(bytes, path);
}

}  // namespace starcnn
