// The PGM and PNG readers of infer: pixels of files written here byte by byte (PNG rows with each
// of the five filters, encoded by the test from the PNG specification), a PNG from another
// encoder, and corrupt or unsupported files, whose errors must name the file and the problem.
#include "apps/cli/image_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
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

struct PngSpec {
  uint32_t width = 0, height = 0;
  int color = 0, depth = 8, interlace = 0;
};

std::vector<uint8_t> ihdr(const PngSpec &s) {
  std::vector<uint8_t> d;
  append_u32(d, s.width);
  append_u32(d, s.height);
  d.insert(d.end(), {uint8_t(s.depth), uint8_t(s.color), 0, 0, uint8_t(s.interlace)});
  return d;
}

// The filtered scanlines of interleaved 8-bit pixels, row y using filter filters[y % size].
std::vector<uint8_t> filtered_rows(const std::vector<uint8_t> &pixels, size_t width, size_t height,
                                   size_t channels, const std::vector<int> &filters) {
  const size_t stride = width * channels;
  std::vector<uint8_t> out;
  for (size_t y = 0; y < height; ++y) {
    const int f = filters[y % filters.size()];
    out.push_back(uint8_t(f));
    for (size_t x = 0; x < stride; ++x) {
      const int raw = pixels[y * stride + x];
      const int a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const int b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const int c = y > 0 && x >= channels ? pixels[(y - 1) * stride + x - channels] : 0;
      const int predictor = f == 0   ? 0
                            : f == 1 ? a
                            : f == 2 ? b
                            : f == 3 ? (a + b) >> 1
                                     : paeth_predictor(a, b, c);
      out.push_back(uint8_t(raw - predictor));
    }
  }
  return out;
}

std::vector<uint8_t> deflate(const std::vector<uint8_t> &data) {
  uLongf size = compressBound(uLong(data.size()));
  std::vector<uint8_t> out(size);
  EXPECT_EQ(compress(out.data(), &size, data.data(), uLong(data.size())), Z_OK);
  out.resize(size);
  return out;
}

// A whole PNG; `split_idat` cuts the compressed data into two IDAT chunks.
std::vector<uint8_t> make_png(const PngSpec &spec, const std::vector<uint8_t> &idat_data,
                              bool split_idat = false, bool with_iend = true) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  append_chunk(png, "IHDR", ihdr(spec));
  append_chunk(png, "tEXt", bytes_of(std::string("Comment\0ignored", 15)));
  if (split_idat) {
    const size_t half = idat_data.size() / 2;
    append_chunk(png, "IDAT", {idat_data.begin(), idat_data.begin() + long(half)});
    append_chunk(png, "IDAT", {idat_data.begin() + long(half), idat_data.end()});
  } else {
    append_chunk(png, "IDAT", idat_data);
  }
  if (with_iend) append_chunk(png, "IEND", {});
  return png;
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
  const Image image = decode_image(file, "a.pgm");
  EXPECT_EQ(image.width, 3u);
  EXPECT_EQ(image.height, 2u);
  EXPECT_EQ(image.channels, 1u);
  EXPECT_EQ(image.pixels, pixels);
}

TEST(Pgm, BinaryPixelByteMayLookLikeWhitespace) {
  std::vector<uint8_t> file = bytes_of("P5 2 1 255\n");
  file.insert(file.end(), {'\n', ' '});  // pixels 10 and 32 right after the header's one space
  EXPECT_EQ(decode_pgm(file, "a.pgm").pixels, (std::vector<uint8_t>{10, 32}));
}

TEST(Pgm, AsciiAndScaledMaxval) {
  const Image image = decode_image(bytes_of("P2\n2 2\n15\n0 15\n# half\n 7 8\n"), "a.pgm");
  // value * 255 / 15 rounded: 7 -> 119, 8 -> 136.
  EXPECT_EQ(image.pixels, (std::vector<uint8_t>{0, 255, 119, 136}));
}

TEST(Pgm, SixteenBitBigEndian) {
  std::vector<uint8_t> file = bytes_of("P5 2 1 65535\n");
  file.insert(file.end(), {0xff, 0xff, 0x80, 0x00});  // 65535 and 32768
  EXPECT_EQ(decode_pgm(file, "a.pgm").pixels, (std::vector<uint8_t>{255, 128}));
}

TEST(Pgm, CorruptFiles) {
  std::vector<uint8_t> truncated = bytes_of("P5 4 4 255\n");
  truncated.resize(truncated.size() + 10);
  expect_image_error([&] { decode_image(truncated, "t.pgm"); }, {"t.pgm", "truncated", "16"});
  expect_image_error([&] { decode_image(bytes_of("P5 4"), "h.pgm"); },
                     {"h.pgm", "truncated", "height"});
  expect_image_error([&] { decode_image(bytes_of("P2 2 1 9 3 10"), "v.pgm"); },
                     {"v.pgm", "10 exceeds maxval 9"});
  expect_image_error([&] { decode_image(bytes_of("P2 0 1 9\n"), "z.pgm"); }, {"z.pgm", "empty"});
  expect_image_error([&] { decode_image(bytes_of("P5 2 x 255\n"), "x.pgm"); },
                     {"x.pgm", "height", "'x'"});
  expect_image_error([&] { decode_image(bytes_of("P5 2 2 0\n"), "m.pgm"); }, {"m.pgm", "maxval"});
  expect_image_error([&] { decode_image(bytes_of("P5 99999 99999 255\n"), "l.pgm"); },
                     {"l.pgm", "too large"});
  expect_image_error([&] { decode_image(bytes_of("P6 1 1 255\nabc"), "c.ppm"); },
                     {"c.ppm", "not a PGM (P5 or P2) or PNG"});
  expect_image_error([&] { decode_image({}, "e.pgm"); }, {"e.pgm", "empty"});
}

TEST(Png, EveryFilterGrayAndRgb) {
  for (size_t channels : {size_t(1), size_t(3)}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    const size_t width = 7, height = 10;
    const std::vector<uint8_t> interleaved =
        random_pixels(width * height * channels, uint32_t(channels));
    const PngSpec spec{uint32_t(width), uint32_t(height), channels == 1 ? 0 : 2};
    const std::vector<uint8_t> rows =
        filtered_rows(interleaved, width, height, channels, {0, 1, 2, 3, 4, 4, 3, 2, 1, 0});
    for (bool split : {false, true}) {
      const Image image = decode_image(make_png(spec, deflate(rows), split), "a.png");
      EXPECT_EQ(image.width, width);
      EXPECT_EQ(image.height, height);
      ASSERT_EQ(image.channels, channels);
      ASSERT_EQ(image.pixels.size(), interleaved.size());
      // Planar out: channel c of pixel i is interleaved[i * channels + c].
      for (size_t i = 0; i < width * height; ++i)
        for (size_t c = 0; c < channels; ++c)
          ASSERT_EQ(image.pixels[c * width * height + i], interleaved[i * channels + c])
              << "pixel " << i << " channel " << c;
    }
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
  const Image small = decode_image(two_by_two, "2x2.png");
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
  const Image plus = decode_image(plus_png, "plus.png");
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

TEST(Png, CorruptAndUnsupportedFiles) {
  const PngSpec gray{4, 3, 0};
  const std::vector<uint8_t> rows = filtered_rows(random_pixels(12, 5), 4, 3, 1, {4});
  const std::vector<uint8_t> good = make_png(gray, deflate(rows));
  ASSERT_NO_THROW(decode_png(good, "good.png"));

  std::vector<uint8_t> bad_crc = good;
  bad_crc[8 + 8 + 2] ^= 1;  // a byte of IHDR's data
  expect_image_error([&] { decode_image(bad_crc, "crc.png"); }, {"crc.png", "IHDR", "CRC"});

  const std::vector<uint8_t> cut(good.begin(), good.begin() + long(good.size() - 20));
  expect_image_error([&] { decode_image(cut, "cut.png"); }, {"cut.png", "truncated"});

  expect_image_error([&] { decode_image(make_png(gray, deflate(rows), false, false), "n.png"); },
                     {"n.png", "no IEND"});

  std::vector<uint8_t> garbage = deflate(rows);
  for (size_t i = 2; i < garbage.size(); ++i) garbage[i] = uint8_t(garbage[i] ^ 0x5a);
  expect_image_error([&] { decode_image(make_png(gray, garbage), "z.png"); },
                     {"z.png", "corrupt compressed"});

  const std::vector<uint8_t> short_rows(rows.begin(), rows.end() - 5);
  expect_image_error([&] { decode_image(make_png(gray, deflate(short_rows)), "s.png"); },
                     {"s.png", "only 10 bytes", "needs 15"});
  std::vector<uint8_t> long_rows = rows;
  long_rows.push_back(0);
  expect_image_error([&] { decode_image(make_png(gray, deflate(long_rows)), "l.png"); },
                     {"l.png", "more than the 15"});

  std::vector<uint8_t> bad_filter = rows;
  bad_filter[5] = 9;  // row 1's filter byte
  expect_image_error([&] { decode_image(make_png(gray, deflate(bad_filter)), "f.png"); },
                     {"f.png", "row 1", "filter type 9"});

  expect_image_error(
      [&] {
        decode_image(make_png({4, 3, 3}, deflate(rows)), "p.png");
      },
      {"p.png", "color type 3", "palette"});
  expect_image_error(
      [&] {
        decode_image(make_png({4, 3, 6}, deflate(rows)), "a.png");
      },
      {"a.png", "color type 6", "RGBA"});
  expect_image_error(
      [&] {
        decode_image(make_png({4, 3, 0, 16}, deflate(rows)), "d.png");
      },
      {"d.png", "bit depth 16"});
  expect_image_error(
      [&] {
        decode_image(make_png({4, 3, 0, 8, 1}, deflate(rows)), "i.png");
      },
      {"i.png", "interlaced"});
  expect_image_error(
      [&] {
        decode_image(make_png({0, 3, 0}, deflate(rows)), "e.png");
      },
      {"e.png", "empty"});
  expect_image_error(
      [&] {
        decode_image(make_png({100000, 3, 0}, deflate(rows)), "b.png");
      },
      {"b.png", "too large"});
  std::vector<uint8_t> signature_only(good.begin(), good.begin() + 8);
  expect_image_error([&] { decode_image(signature_only, "o.png"); }, {"o.png", "truncated"});
}

TEST(ImageFile, MissingFileNamesIt) {
  expect_image_error([] { read_image("/nonexistent/x.png"); },
                     {"/nonexistent/x.png", "cannot open"});
}

TEST(ImageFile, ReadsFromDisk) {
  const std::string path = ::testing::TempDir() + "starcnn_image_file_test.pgm";
  {
    std::ofstream out(path, std::ios::binary);
    out << "P5 2 1 255\n" << char(3) << char(250);
  }
  EXPECT_EQ(read_image(path).pixels, (std::vector<uint8_t>{3, 250}));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace starcnn
