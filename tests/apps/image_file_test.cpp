// The image readers of infer: PNG files of every colour type and bit depth, plain and
// interlaced, encoded by the test from the PNG specification and compared with the
// specification's meaning of their samples; JPEG files from another encoder against the flat
// colours they were made of; a BMP and PGM files written byte by byte; the header checked before
// decoding; corrupt files and things that are not regular files, whose errors must name the file
// and the problem.
#include "apps/cli/image_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace starcnn {
namespace {

std::vector<uint8_t> bytes_of(const std::string &text) {
  return {text.begin(), text.end()};
}

void append_u32(std::vector<uint8_t> &out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(v >> shift));
}

void append_chunk(std::vector<uint8_t> &png, const std::string &type,
                  const std::vector<uint8_t> &data) {
  append_u32(png, uint32_t(data.size()));
  std::vector<uint8_t> body(type.begin(), type.end());
  body.insert(body.end(), data.begin(), data.end());
  png.insert(png.end(), body.begin(), body.end());
  append_u32(png, uint32_t(crc32(0, body.data(), uInt(body.size()))));
}

int paeth_predictor(int a, int b, int c) {  // PNG specification, section 9.4
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  if (pb <= pc) return b;
  return c;
}

std::vector<uint8_t> random_pixels(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<uint8_t> v(n);
  for (auto &p : v) p = uint8_t(dist(gen));
  return v;
}

// Runs f, which must throw ImageError whose message holds every part.
void expect_image_error(const std::function<void()> &f, const std::vector<std::string> &parts) {
  try {
    f();
  } catch (const ImageError &e) {
    const std::string message = e.what();
    for (const std::string &part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "'" << message << "' lacks '" << part << "'";
    return;
  }
  ADD_FAILURE() << "no ImageError thrown";
}

TEST(Pgm, BinaryWithComments) {
  std::vector<uint8_t> file = bytes_of("P5\n# made by hand\n3 2 # width height\n255\n");
  const std::vector<uint8_t> pixels = {0, 10, 20, 200, 254, 255};
  file.insert(file.end(), pixels.begin(), pixels.end());
  const Image image = decode_image(file, "a.pgm", {3, 2, 1});
  EXPECT_EQ(image.width, 3u);
  EXPECT_EQ(image.height, 2u);
  EXPECT_EQ(image.channels, 1u);
  EXPECT_EQ(image.pixels, pixels);
}

TEST(Pgm, BinaryPixelByteMayLookLikeWhitespace) {
  std::vector<uint8_t> file = bytes_of("P5 2 1 255\n");
  file.insert(file.end(), {'\n', ' '});  // pixels 10 and 32 right after the header's one space
  EXPECT_EQ(decode_image(file, "a.pgm", {2, 1, 1}).pixels, (std::vector<uint8_t>{10, 32}));
}

TEST(Pgm, AsciiAndScaledMaxval) {
  const Image image =
      decode_image(bytes_of("P2\n2 2\n15\n0 15\n# half\n 7 8\n"), "a.pgm", {2, 2, 1});
  // value * 255 / 15 rounded: 7 -> 119, 8 -> 136.
  EXPECT_EQ(image.pixels, (std::vector<uint8_t>{0, 255, 119, 136}));
}

TEST(Pgm, SixteenBitBigEndian) {
  std::vector<uint8_t> file = bytes_of("P5 2 1 65535\n");
  file.insert(file.end(), {0xff, 0xff, 0x80, 0x00});  // 65535 and 32768
  EXPECT_EQ(decode_image(file, "a.pgm", {2, 1, 1}).pixels, (std::vector<uint8_t>{255, 128}));
}

TEST(Pgm, GrayToRgbCopiesThePlane) {
  std::vector<uint8_t> file = bytes_of("P5 2 1 255\n");
  file.insert(file.end(), {7, 99});
  EXPECT_EQ(decode_image(file, "a.pgm", {2, 1, 3}).pixels,
            (std::vector<uint8_t>{7, 99, 7, 99, 7, 99}));
}

TEST(Pgm, CorruptFiles) {
  std::string truncated = "P5 4 4 255\n";
  truncated.resize(truncated.size() + 10);
  struct Case {
    std::string file;
    ImageShape shape;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {truncated, {4, 4, 1}, {"truncated", "16"}},
      {"P5 4", {4, 4, 1}, {"truncated", "height"}},
      {"P2 2 1 9 3 10", {2, 1, 1}, {"10 exceeds maxval 9"}},
      {"P5 2 x 255\n", {2, 2, 1}, {"height", "'x'"}},
      {"P5 2 2 0\n", {2, 2, 1}, {"maxval"}},
      // The size is checked before any pixel is read.
      {"P5 99999 99999 255\n", {28, 28, 1}, {"99999x99999", "takes 28x28"}},
      {"", {2, 2, 1}, {"empty"}},
  };
  for (const Case &c : cases) {
    std::vector<std::string> parts = c.parts;
    parts.push_back("bad.pgm");
    expect_image_error([&] { decode_image(bytes_of(c.file), "bad.pgm", c.shape); }, parts);
  }
}

// --- PPM: random RGB images in the four netpbm forms, against the samples written ------------

// A P6 (binary) or P3 (ASCII) file of `rgb` (interleaved, width x height) at maxval 255 or 65535
// (16-bit samples are the 8-bit value times 257, big-endian, so they scale back exactly).
std::vector<uint8_t> ppm_file(const std::vector<uint8_t> &rgb, size_t width, size_t height,
                              bool binary, bool sixteen_bit) {
  std::string header = std::string(binary ? "P6" : "P3") + "\n# test\n" + std::to_string(width) +
                       " " + std::to_string(height) + "\n" + (sixteen_bit ? "65535" : "255") + "\n";
  std::vector<uint8_t> file = bytes_of(header);
  for (uint8_t v : rgb) {
    const unsigned value = sixteen_bit ? v * 257u : v;
    if (!binary) {
      const std::string text = std::to_string(value) + " ";
      file.insert(file.end(), text.begin(), text.end());
    } else if (sixteen_bit) {
      file.insert(file.end(), {uint8_t(value >> 8), uint8_t(value & 0xff)});
    } else {
      file.push_back(uint8_t(value));
    }
  }
  return file;
}

TEST(Ppm, EveryFormToRgbExactlyAndToGrayAsLuma) {
  const size_t width = 5, height = 3;
  uint32_t seed = 40;
  for (bool binary : {true, false})
    for (bool sixteen_bit : {false, true}) {
      SCOPED_TRACE(std::string(binary ? "P6" : "P3") + (sixteen_bit ? " 16-bit" : " 8-bit"));
      const std::vector<uint8_t> rgb = random_pixels(width * height * 3, seed++);
      const std::vector<uint8_t> file = ppm_file(rgb, width, height, binary, sixteen_bit);
      const Image colour = decode_image(file, "a.ppm", {width, height, 3});
      const Image gray = decode_image(file, "a.ppm", {width, height, 1});
      ASSERT_EQ(colour.pixels.size(), rgb.size());
      ASSERT_EQ(gray.pixels.size(), width * height);
      const size_t plane = width * height;
      for (size_t i = 0; i < plane; ++i) {
        for (size_t c = 0; c < 3; ++c)
          ASSERT_EQ(colour.pixels[c * plane + i], rgb[3 * i + c]) << "pixel " << i;
        const double luma = 0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2];
        ASSERT_NEAR(gray.pixels[i], luma, 1.0) << "pixel " << i;
      }
    }
}

TEST(Ppm, CorruptFiles) {
  // Found by fuzz_image: a 16-bit P6 file whose pixels are missing (stb_image overran its buffer).
  std::string short_sixteen_bit = "P6 28 28 6028\n";
  short_sixteen_bit.resize(short_sixteen_bit.size() + 28 * 28 * 3);
  expect_image_error(
      [&] {
        decode_image(bytes_of(short_sixteen_bit), "bad.ppm", {28, 28, 1});
      },
      {"bad.ppm", "truncated", std::to_string(28 * 28 * 3 * 2)});
  expect_image_error(
      [&] {
        decode_image(bytes_of("P3 1 1 255 1 2 300"), "bad.ppm", {1, 1, 3});
      },
      {"bad.ppm", "300 exceeds maxval 255"});
  expect_image_error(
      [&] {
        decode_image(bytes_of("P3 1 1 255 1 2"), "bad.ppm", {1, 1, 3});
      },
      {"bad.ppm", "truncated", "pixel value"});
}

// --- PNG files written here, from the PNG specification ---------------------------------------

// Samples per pixel of each PNG colour type (0 gray, 2 RGB, 3 palette index, 4 gray+alpha, 6 RGBA).
size_t png_channels(int color) {
  return color == 0 || color == 3 ? 1 : color == 2 ? 3 : color == 4 ? 2 : 4;
}

struct PngImage {
  size_t width = 0, height = 0;
  int color = 0, depth = 8;
  bool interlaced = false;
  std::vector<uint16_t> samples;  // interleaved, png_channels(color) per pixel, < 2^depth
  std::vector<uint8_t> palette;   // RGB triples (colour type 3)
};

// Scanlines of the pixels (x0 + i * dx, y0 + j * dy), packed at `depth` bits (MSB first, 16-bit
// big-endian), each row filtered with filter (row % 5) and prefixed by its filter byte.
void append_filtered_pass(const PngImage &png, size_t x0, size_t y0, size_t dx, size_t dy,
                          std::vector<uint8_t> &out) {
  const size_t ch = png_channels(png.color);
  const size_t w = png.width > x0 ? (png.width - x0 + dx - 1) / dx : 0;
  const size_t h = png.height > y0 ? (png.height - y0 + dy - 1) / dy : 0;
  if (w == 0 || h == 0) return;
  const size_t bits = ch * size_t(png.depth), row_bytes = (w * bits + 7) / 8;
  const size_t bpp = std::max<size_t>(1, bits / 8);
  std::vector<uint8_t> previous(row_bytes, 0);
  for (size_t j = 0; j < h; ++j) {
    std::vector<uint8_t> raw(row_bytes, 0);
    size_t bit = 0;
    for (size_t i = 0; i < w; ++i)
      for (size_t c = 0; c < ch; ++c) {
        const uint16_t v = png.samples[((y0 + j * dy) * png.width + x0 + i * dx) * ch + c];
        if (png.depth == 16) {
          raw[bit / 8] = uint8_t(v >> 8);
          raw[bit / 8 + 1] = uint8_t(v);
        } else {
          raw[bit / 8] = uint8_t(raw[bit / 8] | v << (8 - png.depth - bit % 8));
        }
        bit += size_t(png.depth);
      }
    const int filter = int(j % 5);
    out.push_back(uint8_t(filter));
    for (size_t x = 0; x < row_bytes; ++x) {
      const int a = x >= bpp ? raw[x - bpp] : 0, b = previous[x];
      const int c = x >= bpp ? previous[x - bpp] : 0;
      const int predictor = filter == 0   ? 0
                            : filter == 1 ? a
                            : filter == 2 ? b
                            : filter == 3 ? (a + b) >> 1
                                          : paeth_predictor(a, b, c);
      out.push_back(uint8_t(raw[x] - predictor));
    }
    previous = raw;
  }
}

std::vector<uint8_t> deflate(const std::vector<uint8_t> &data) {
  uLongf size = compressBound(uLong(data.size()));
  std::vector<uint8_t> out(size);
  EXPECT_EQ(compress(out.data(), &size, data.data(), uLong(data.size())), Z_OK);
  out.resize(size);
  return out;
}

std::vector<uint8_t> png_header(size_t width, size_t height, int depth, int color,
                                bool interlaced) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  append_u32(ihdr, uint32_t(width));
  append_u32(ihdr, uint32_t(height));
  ihdr.insert(ihdr.end(), {uint8_t(depth), uint8_t(color), 0, 0, uint8_t(interlaced ? 1 : 0)});
  append_chunk(png, "IHDR", ihdr);
  return png;
}

std::vector<uint8_t> encode_png(const PngImage &png) {
  std::vector<uint8_t> out =
      png_header(png.width, png.height, png.depth, png.color, png.interlaced);
  append_chunk(out, "tEXt", bytes_of(std::string("Comment\0ignored", 15)));
  if (png.color == 3) append_chunk(out, "PLTE", png.palette);
  std::vector<uint8_t> rows;
  if (png.interlaced) {  // Adam7: seven passes of (x0, y0, dx, dy)
    const size_t passes[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                 {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    for (const auto &p : passes) append_filtered_pass(png, p[0], p[1], p[2], p[3], rows);
  } else {
    append_filtered_pass(png, 0, 0, 1, 1, rows);
  }
  const std::vector<uint8_t> compressed = deflate(rows);
  const size_t half = compressed.size() / 2;  // two IDAT chunks, as encoders may write
  append_chunk(out, "IDAT", {compressed.begin(), compressed.begin() + long(half)});
  append_chunk(out, "IDAT", {compressed.begin() + long(half), compressed.end()});
  append_chunk(out, "IEND", {});
  return out;
}

// The reference: each pixel as RGB in [0, 255] (doubles), from the PNG specification's meaning of
// the samples (scaled by 255 / (2^depth - 1), palette looked up, alpha ignored).
std::vector<double> reference_rgb(const PngImage &png) {
  const size_t ch = png_channels(png.color), n = png.width * png.height;
  const double scale = 255.0 / double((1u << png.depth) - 1);
  std::vector<double> rgb(3 * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) {
      const uint16_t *s = &png.samples[i * ch];
      double v = 0;
      if (png.color == 3)
        v = png.palette[3 * s[0] + c];
      else if (png.color == 0 || png.color == 4)
        v = s[0] * scale;
      else
        v = s[c] * scale;
      rgb[3 * i + c] = v;
    }
  return rgb;
}

PngImage random_png(int color, int depth, bool interlaced, uint32_t seed) {
  PngImage png{13, 11, color, depth, interlaced, {}, {}};  // odd sizes: partial Adam7 blocks
  std::mt19937 gen(seed);
  const size_t entries = color == 3 ? std::min(256u, 1u << depth) : 0;
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < 3 * entries; ++i) png.palette.push_back(uint8_t(byte(gen)));
  const uint32_t top = color == 3 ? uint32_t(entries - 1) : (1u << depth) - 1;
  std::uniform_int_distribution<uint32_t> sample(0, top);
  png.samples.resize(png.width * png.height * png_channels(color));
  for (auto &v : png.samples) v = uint16_t(sample(gen));
  return png;
}

// Decoded pixels (planar) against the reference: exact for 8 bits and fewer, within 1 for 16-bit
// samples (scaled by truncation), within 2 for RGB to gray (integer luma weights).
void expect_decodes_to_reference(const PngImage &png, size_t channels) {
  const Image image = decode_image(encode_png(png), "t.png", {png.width, png.height, channels});
  ASSERT_EQ(image.channels, channels);
  const size_t n = png.width * png.height;
  ASSERT_EQ(image.pixels.size(), n * channels);
  const std::vector<double> rgb = reference_rgb(png);
  const bool luma = channels == 1 && (png.color == 2 || png.color == 3 || png.color == 6);
  const double tolerance = luma ? 2.0 : png.depth == 16 ? 1.0 : 0.0;
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < channels; ++c) {
      const double *p = &rgb[3 * i];
      const double want = luma ? 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] : p[c];
      ASSERT_LE(std::abs(image.pixels[c * n + i] - want), tolerance + 1e-9)
          << "pixel " << i << " channel " << c << ": got " << int(image.pixels[c * n + i])
          << ", expected " << want;
    }
}

TEST(Png, EveryColourTypeAndDepthPlainAndInterlaced) {
  const std::vector<std::pair<int, int>> kinds = {{0, 1}, {0, 2},  {0, 4}, {0, 8}, {0, 16},  // gray
                                                  {4, 8}, {4, 16},                   // gray + alpha
                                                  {2, 8}, {2, 16},                   // RGB
                                                  {6, 8}, {6, 16},                   // RGBA
                                                  {3, 1}, {3, 2},  {3, 4}, {3, 8}};  // palette
  uint32_t seed = 1;
  for (const auto &[color, depth] : kinds)
    for (bool interlaced : {false, true})
      for (size_t channels : {size_t(1), size_t(3)}) {
        SCOPED_TRACE("colour type " + std::to_string(color) + ", depth " + std::to_string(depth) +
                     (interlaced ? ", interlaced" : "") + ", to " + std::to_string(channels) +
                     " channel(s)");
        expect_decodes_to_reference(random_png(color, depth, interlaced, seed++), channels);
      }
}

// PNG files written by other encoders, found on a Debian machine: IPython's 2x2 gray test image
// (rows with the Sub and Up filters) and Sphinx's 11x11 gray "plus" icon. The expected pixels were
// decoded by another PNG reader (to PPM).
TEST(Png, FilesFromOtherEncoders) {
  const std::vector<uint8_t> two_by_two = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
      0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00, 0x00, 0x00, 0x00, 0x57,
      0xdd, 0x52, 0xf8, 0x00, 0x00, 0x00, 0x0e, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x6c,
      0x60, 0x60, 0x62, 0x60, 0x00, 0x00, 0x02, 0x92, 0x00, 0x84, 0xf7, 0x7c, 0xa3, 0x58, 0x00,
      0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  const Image small = decode_image(two_by_two, "2x2.png", {2, 2, 1});
  EXPECT_EQ(small.width, 2u);
  EXPECT_EQ(small.height, 2u);
  EXPECT_EQ(small.channels, 1u);
  EXPECT_EQ(small.pixels, (std::vector<uint8_t>{128, 128, 128, 128}));

  const std::vector<uint8_t> plus_png = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
      0x52, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x0b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x8c,
      0xc7, 0x28, 0xfa, 0x00, 0x00, 0x00, 0x21, 0x49, 0x44, 0x41, 0x54, 0x78, 0x01, 0x63, 0x38,
      0x83, 0x00, 0x0c, 0x67, 0x3e, 0x40, 0xc1, 0x3b, 0x28, 0x5b, 0x93, 0x10, 0x5b, 0x13, 0x02,
      0x88, 0x55, 0xff, 0x0e, 0x0a, 0x40, 0x6c, 0x04, 0x00, 0x00, 0x2d, 0x21, 0x61, 0x94, 0xf3,
      0xf0, 0x40, 0x04, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  const Image plus = decode_image(plus_png, "plus.png", {11, 11, 1});
  EXPECT_EQ(plus.width, 11u);
  EXPECT_EQ(plus.height, 11u);
  EXPECT_EQ(plus.channels, 1u);
  EXPECT_EQ(
      plus.pixels,
      (std::vector<uint8_t>{
          204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 240, 240, 240, 240, 240, 240,
          240, 240, 238, 204, 204, 240, 240, 240, 240, 41,  240, 240, 240, 238, 204, 204, 240, 240,
          240, 240, 41,  240, 240, 240, 238, 204, 204, 240, 240, 240, 240, 41,  240, 240, 240, 238,
          204, 204, 240, 41,  41,  41,  41,  41,  41,  41,  238, 204, 204, 240, 240, 240, 240, 41,
          240, 240, 240, 238, 204, 204, 240, 240, 240, 240, 41,  240, 240, 240, 238, 204, 204, 240,
          240, 240, 240, 41,  240, 240, 240, 238, 204, 204, 238, 238, 238, 238, 238, 238, 238, 238,
          238, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204}));
}

// A PNG's header is read before its pixels: a 16384x16384 claim is refused at once when the
// network takes 28x28 (issue 14: the old decoder allocated first).
TEST(Png, SizeOfTheHeaderCheckedBeforeDecoding) {
  std::vector<uint8_t> huge = png_header(16384, 16384, 8, 0, false);
  append_chunk(huge, "IDAT", deflate(std::vector<uint8_t>(64, 0)));
  append_chunk(huge, "IEND", {});
  EXPECT_LT(huge.size(), 130u);
  const auto start = std::chrono::steady_clock::now();
  expect_image_error(
      [&] {
        decode_image(huge, "huge.png", {28, 28, 1});
      },
      {"huge.png", "16384x16384", "takes 28x28", "no resizing"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));

  const PngImage small = random_png(0, 8, false, 3);
  expect_image_error(
      [&] {
        decode_image(encode_png(small), "s.png", {28, 28, 1});
      },
      {"s.png", "13x11", "takes 28x28"});
  expect_image_error(
      [&] {
        decode_image(encode_png(small), "c.png", {13, 11, 2});
      },
      {"c.png", "2 channels"});
}

TEST(Png, CorruptFiles) {
  const std::vector<uint8_t> good = encode_png(random_png(2, 8, false, 4));
  ASSERT_NO_THROW(decode_image(good, "good.png", {13, 11, 3}));
  const std::vector<uint8_t> cut(good.begin(), good.begin() + long(good.size() / 2));
  expect_image_error([&] { decode_image(cut, "cut.png", {13, 11, 3}); }, {"cut.png"});
  std::vector<uint8_t> garbage = good;
  for (size_t i = 60; i < garbage.size() - 12; ++i) garbage[i] = uint8_t(garbage[i] ^ 0x5a);
  expect_image_error([&] { decode_image(garbage, "z.png", {13, 11, 3}); }, {"z.png"});
  // A chunk claiming 2 GiB: Debian's stb_image would grow its buffer to that before reading.
  std::vector<uint8_t> claims = good;
  const auto idat =
      std::search(claims.begin(), claims.end(), std::begin("IDAT"), std::begin("IDAT") + 4);
  ASSERT_NE(idat, claims.end());
  std::fill(idat - 4, idat, uint8_t(0x7f));
  expect_image_error(
      [&] {
        decode_image(claims, "big.png", {13, 11, 3});
      },
      {"big.png", "corrupt PNG", "chunk IDAT claims 2139062143 bytes"});
  const std::vector<uint8_t> signature_only(good.begin(), good.begin() + 8);
  expect_image_error(
      [&] {
        decode_image(signature_only, "o.png", {13, 11, 3});
      },
      {"o.png", "not a PNG, JPEG, BMP"});
  expect_image_error(
      [&] {
        decode_image(bytes_of("hello, world"), "t.txt", {2, 2, 1});
      },
      {"t.txt", "not a PNG, JPEG, BMP, PGM or PPM"});
}

// --- JPEG and BMP --------------------------------------------------------------------------

// Written by Pillow 9.4 (libjpeg-turbo) at quality 100 from flat 8x8 blocks, which JPEG keeps up
// to rounding: RGB 16x16 (4:4:4, baseline) of the blocks (200, 30, 40), (20, 180, 60) on top and
// (30, 60, 220), (250, 250, 250) below; gray 16x8 (progressive) of 40 left and 210 right.
const std::vector<uint8_t> kFlatBlocksRgbJpeg = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0xff, 0xdb, 0x00, 0x43, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0xff, 0xc0,
    0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10, 0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11,
    0x01, 0xff, 0xc4, 0x00, 0x1f, 0x00, 0x00, 0x01, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
    0x0a, 0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x10, 0x00, 0x02, 0x01, 0x03, 0x03, 0x02, 0x04, 0x03, 0x05,
    0x05, 0x04, 0x04, 0x00, 0x00, 0x01, 0x7d, 0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21,
    0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23,
    0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17,
    0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a,
    0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a,
    0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a,
    0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99,
    0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
    0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5,
    0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1,
    0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xff, 0xc4, 0x00, 0x1f, 0x01, 0x00, 0x03,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x11, 0x00,
    0x02, 0x01, 0x02, 0x04, 0x04, 0x03, 0x04, 0x07, 0x05, 0x04, 0x04, 0x00, 0x01, 0x02, 0x77, 0x00,
    0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13,
    0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15,
    0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27,
    0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
    0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
    0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,
    0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6,
    0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4,
    0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2,
    0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9,
    0xfa, 0xff, 0xda, 0x00, 0x0c, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3f, 0x00, 0xfc,
    0x8f, 0xaf, 0xe3, 0xf3, 0xfe, 0xa8, 0x0f, 0xd2, 0x0a, 0xfc, 0xdc, 0xff, 0x00, 0xcc, 0xbc, 0xfc,
    0x77, 0xaf, 0xfb, 0xb0, 0x3f, 0xd5, 0x03, 0xfd, 0x6a, 0x2b, 0xfe, 0x55, 0xcf, 0xee, 0x03, 0xff,
    0xd9,
};
const std::vector<uint8_t> kTwoBlocksGrayProgressiveJpeg = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0xff, 0xc2, 0x00, 0x0b, 0x08, 0x00, 0x08,
    0x00, 0x10, 0x01, 0x01, 0x11, 0x00, 0xff, 0xc4, 0x00, 0x15, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x0a, 0xff, 0xda, 0x00,
    0x08, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x27, 0xea, 0xa3, 0xff, 0xc4, 0x00, 0x14, 0x10, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
    0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x05, 0x02, 0x3f, 0xff, 0xc4, 0x00, 0x14, 0x10,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x10, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x06, 0x3f, 0x02, 0x3f, 0xff, 0xc4, 0x00, 0x14,
    0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x10, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3f, 0x21, 0x3f, 0xff, 0xda, 0x00,
    0x08, 0x01, 0x01, 0x00, 0x00, 0x00, 0x10, 0x3f, 0xff, 0xc4, 0x00, 0x14, 0x10, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0xff, 0xda,
    0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3f, 0x10, 0x3f, 0xff, 0xd9,
};

TEST(Jpeg, FlatBlocksWithinRounding) {
  const uint8_t blocks[4][3] = {{200, 30, 40}, {20, 180, 60}, {30, 60, 220}, {250, 250, 250}};
  const Image rgb = decode_image(kFlatBlocksRgbJpeg, "rgb.jpg", {16, 16, 3});
  ASSERT_EQ(rgb.pixels.size(), 3u * 256);
  const Image luma = decode_image(kFlatBlocksRgbJpeg, "rgb.jpg", {16, 16, 1});
  for (size_t y = 0; y < 16; ++y)
    for (size_t x = 0; x < 16; ++x) {
      const uint8_t *want = blocks[(y / 8) * 2 + x / 8];
      for (size_t c = 0; c < 3; ++c)
        ASSERT_NEAR(rgb.pixels[c * 256 + y * 16 + x], want[c], 2) << x << "," << y << " c" << c;
      ASSERT_NEAR(luma.pixels[y * 16 + x], 0.299 * want[0] + 0.587 * want[1] + 0.114 * want[2], 3)
          << x << "," << y;
    }
  const Image gray = decode_image(kTwoBlocksGrayProgressiveJpeg, "gray.jpg", {16, 8, 3});
  for (size_t c = 0; c < 3; ++c)
    for (size_t i = 0; i < 128; ++i)
      ASSERT_NEAR(gray.pixels[c * 128 + i], i % 16 < 8 ? 40 : 210, 2) << i;
  expect_image_error(
      [&] {
        decode_image(kFlatBlocksRgbJpeg, "rgb.jpg", {28, 28, 1});
      },
      {"rgb.jpg", "16x16", "takes 28x28"});
}

// A DHT segment whose 16 code counts sum past 256: Debian's stb_image would write past its table
// (fuzz_image found it); the check in front of it refuses the file. The last table of the
// progressive file comes after entropy-coded scans, so the check must walk past them to see it.
std::vector<uint8_t> with_oversized_huffman_table(std::vector<uint8_t> jpeg, bool last) {
  size_t at = 0;
  for (size_t i = 0; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xff && jpeg[i + 1] == 0xc4) {
      at = i;
      if (!last) break;
    }
  EXPECT_NE(at, 0u);
  // Marker (2), length (2), class/id (1), then the 16 counts: the last two say 255 codes each.
  jpeg[at + 5 + 14] = 255;
  jpeg[at + 5 + 15] = 255;
  return jpeg;
}

TEST(Jpeg, HuffmanTableOfMoreThan256CodesIsRefused) {
  for (bool last : {false, true}) {
    expect_image_error(
        [&] {
          decode_image(with_oversized_huffman_table(kFlatBlocksRgbJpeg, last), "bad.jpg",
                       {16, 16, 1});
        },
        {"bad.jpg", "corrupt JPEG", "256 at most"});
    expect_image_error(
        [&] {
          decode_image(with_oversized_huffman_table(kTwoBlocksGrayProgressiveJpeg, last), "bad.jpg",
                       {16, 8, 1});
        },
        {"bad.jpg", "corrupt JPEG", "256 at most"});
  }
}

// A 24-bit BMP written here from the format's definition: rows bottom-up, BGR, each row padded to
// four bytes.
TEST(Bmp, TwentyFourBitBottomUp) {
  const size_t width = 3, height = 2;
  const std::vector<uint8_t> rgb = random_pixels(width * height * 3, 9);
  const size_t row = (width * 3 + 3) / 4 * 4, size = 54 + row * height;
  std::vector<uint8_t> bmp(size, 0);
  auto put32 = [&](size_t at, uint32_t v) {
    for (size_t b = 0; b < 4; ++b) bmp[at + b] = uint8_t(v >> (8 * b));
  };
  bmp[0] = 'B';
  bmp[1] = 'M';
  put32(2, uint32_t(size));
  put32(10, 54);  // pixel data offset
  put32(14, 40);  // BITMAPINFOHEADER
  put32(18, uint32_t(width));
  put32(22, uint32_t(height));
  bmp[26] = 1;   // planes
  bmp[28] = 24;  // bits per pixel
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x)
      for (size_t c = 0; c < 3; ++c)
        bmp[54 + (height - 1 - y) * row + 3 * x + c] = rgb[(y * width + x) * 3 + 2 - c];
  const Image image = decode_image(bmp, "a.bmp", {width, height, 3});
  for (size_t i = 0; i < width * height; ++i)
    for (size_t c = 0; c < 3; ++c)
      ASSERT_EQ(image.pixels[c * width * height + i], rgb[i * 3 + c]) << i << " c" << c;
}

// --- files ---------------------------------------------------------------------------------

TEST(ImageFile, MissingFileNamesIt) {
  expect_image_error(
      [] {
        read_image("/nonexistent/x.png", {2, 2, 1});
      },
      {"/nonexistent/x.png", "cannot open"});
}

TEST(ImageFile, ReadsFromDisk) {
  const std::string path = ::testing::TempDir() + "starcnn_image_file_test.pgm";
  {
    std::ofstream out(path, std::ios::binary);
    out << "P5 2 1 255\n" << char(3) << char(250);
  }
  EXPECT_EQ(read_image(path, {2, 1, 1}).pixels, (std::vector<uint8_t>{3, 250}));
  std::remove(path.c_str());
}

// A FIFO (opening it would wait for a writer), a link to /dev/zero (it never ends), a folder and a
// file over the size limit are refused without reading them.
TEST(ImageFile, RefusesWhatIsNotARegularFile) {
  const std::string dir =
      ::testing::TempDir() + "starcnn_image_file_test_" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string fifo = dir + "/fifo.png", zero = dir + "/zero.png", big = dir + "/big.png";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", zero.c_str()), 0);
  std::ofstream(big).close();
  ASSERT_EQ(truncate(big.c_str(), off_t(kMaxImageFileBytes + 1)), 0);  // sparse: nothing written
  const auto start = std::chrono::steady_clock::now();
  expect_image_error([&] { read_image(fifo, {28, 28, 1}); }, {fifo, "not a regular file"});
  expect_image_error([&] { read_image(zero, {28, 28, 1}); }, {zero, "not a regular file"});
  expect_image_error([&] { read_image(dir, {28, 28, 1}); }, {dir, "is a directory"});
  expect_image_error(
      [&] {
        read_image(big, {28, 28, 1});
      },
      {big, std::to_string(kMaxImageFileBytes + 1) + " bytes", "more than"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  for (const std::string &f : {fifo, zero, big}) std::remove(f.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace starcnn
