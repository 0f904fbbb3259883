#include "apps/cli/image_file.h"

#include "apps/cli/stb_input_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

// stb_image's declarations; its code is compiled in stb_image_decoder.cpp.
#define STBI_NO_STDIO
#include <stb/stb_image.h>

namespace starcnn {
namespace {

[[noreturn]] void fail(const std::string &source, const std::string &what) {
  throw ImageError(source + ": " + what);
}

void check_size(size_t width, size_t height, const ImageShape &want, const std::string &source) {
  if (width != want.width || height != want.height)
    fail(source, "the image is " + std::to_string(width) + "x" + std::to_string(height) +
                     ", the network takes " + std::to_string(want.width) + "x" +
                     std::to_string(want.height) + " (no resizing is done)");
}

// --- PGM and PPM (netpbm), read here: stb_image's 16-bit PPM path overflows its buffer ---------

class PnmScanner {
 public:
  PnmScanner(const std::vector<uint8_t> &bytes, const std::string &source)
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
  // The single whitespace byte that ends a binary file's header.
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

// P2/P5 (gray) and P3/P6 (RGB): the ASCII and binary forms.
bool is_pnm(const std::vector<uint8_t> &bytes) {
  return bytes.size() >= 2 && bytes[0] == 'P' &&
         (bytes[1] == '2' || bytes[1] == '3' || bytes[1] == '5' || bytes[1] == '6');
}

// The file's samples scaled to 0..255, interleaved, in row order: 1 channel (PGM) or 3 (PPM).
std::vector<uint8_t> decode_pnm_samples(const std::vector<uint8_t> &bytes,
                                        const std::string &source, const ImageShape &want,
                                        size_t &channels) {
  const bool binary = bytes[1] == '5' || bytes[1] == '6';
  channels = bytes[1] == '3' || bytes[1] == '6' ? 3 : 1;
  PnmScanner scan(bytes, source);
  const size_t width = scan.number("width"), height = scan.number("height");
  const unsigned long maxval = scan.number("maxval");
  check_size(width, height, want, source);
  if (maxval == 0 || maxval > 65535)
    fail(source, "maxval must be 1 to 65535, got " + std::to_string(maxval));
  const size_t count = width * height * channels;
  std::vector<uint8_t> samples(count);
  auto scaled = [&](unsigned long value) {
    if (value > maxval)
      fail(source,
           "pixel value " + std::to_string(value) + " exceeds maxval " + std::to_string(maxval));
    return uint8_t((value * 255 + maxval / 2) / maxval);
  };
  if (binary) {
    scan.header_end();
    const size_t sample = maxval < 256 ? 1 : 2;
    const size_t available = bytes.size() - scan.pos();
    if (available < count * sample)
      fail(source, "truncated: " + std::to_string(available) + " bytes of pixels, " +
                       std::to_string(width) + "x" + std::to_string(height) + " needs " +
                       std::to_string(count * sample));
    const uint8_t *p = bytes.data() + scan.pos();
    for (size_t i = 0; i < count; ++i)
      samples[i] = scaled(sample == 1 ? p[i] : unsigned(p[2 * i]) << 8 | p[2 * i + 1]);
  } else {
    for (size_t i = 0; i < count; ++i) samples[i] = scaled(scan.number("pixel value"));
  }
  return samples;
}

// Interleaved pixels with want.channels channels: gray copied to RGB, RGB to gray as rounded
// ITU-R 601 luma (what stb_image does for the other formats, within one level).
std::vector<uint8_t> decode_pnm(const std::vector<uint8_t> &bytes, const std::string &source,
                                const ImageShape &want) {
  size_t channels = 0;
  const std::vector<uint8_t> samples = decode_pnm_samples(bytes, source, want, channels);
  if (channels == want.channels) return samples;
  const size_t pixels = samples.size() / channels;
  std::vector<uint8_t> out(pixels * want.channels);
  for (size_t i = 0; i < pixels; ++i) {
    if (channels == 1) {
      for (size_t c = 0; c < want.channels; ++c) out[i * want.channels + c] = samples[i];
    } else {
      const uint8_t *rgb = &samples[3 * i];
      out[i] = uint8_t((299u * rgb[0] + 587u * rgb[1] + 114u * rgb[2] + 500u) / 1000u);
    }
  }
  return out;
}

// --- everything else: stb_image ------------------------------------------------------------

// Interleaved pixels with want.channels channels (stb_image converts: gray to RGB by copying,
// RGB to gray as luma, alpha dropped).
std::vector<uint8_t> decode_with_stb(const std::vector<uint8_t> &bytes, const std::string &source,
                                     const ImageShape &want) {
  if (bytes.size() > size_t(INT32_MAX)) fail(source, "the file is too large");
  const auto *data = reinterpret_cast<const stbi_uc *>(bytes.data());
  const int length = int(bytes.size());
  const std::string problem = stb_input_problem(bytes);
  if (!problem.empty()) fail(source, problem);
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, length, &width, &height, &channels))
    fail(source, std::string("not a PNG, JPEG, BMP, PGM or PPM image, or a corrupt one (") +
                     stbi_failure_reason() + ")");
  check_size(size_t(width), size_t(height), want, source);
  std::unique_ptr<stbi_uc, void (*)(void *)> pixels(
      stbi_load_from_memory(data, length, &width, &height, &channels, int(want.channels)),
      stbi_image_free);
  if (!pixels) fail(source, std::string("cannot decode: ") + stbi_failure_reason());
  check_size(size_t(width), size_t(height), want, source);
  return {pixels.get(), pixels.get() + size_t(width) * size_t(height) * want.channels};
}

}  // namespace

Image decode_image(const std::vector<uint8_t> &bytes, const std::string &source,
                   const ImageShape &want) {
  if (want.channels != 1 && want.channels != 3)
    fail(source, "the network takes " + std::to_string(want.channels) +
                     " channels; an image gives 1 (gray) or 3 (RGB)");
  if (bytes.empty()) fail(source, "the file is empty");
  Image image{want.width, want.height, want.channels, {}};
  const size_t plane = want.width * want.height;
  const std::vector<uint8_t> interleaved =
      is_pnm(bytes) ? decode_pnm(bytes, source, want) : decode_with_stb(bytes, source, want);
  image.pixels.resize(interleaved.size());
  for (size_t i = 0; i < plane; ++i)
    for (size_t c = 0; c < want.channels; ++c)
      image.pixels[c * plane + i] = interleaved[i * want.channels + c];
  return image;
}

Image read_image(const std::string &path, const ImageShape &want) {
  // stat before open: opening a FIFO would wait for a writer, and a device may never end.
  struct stat info {};
  if (stat(path.c_str(), &info) != 0)
    fail(path, "cannot open (" + std::string(std::strerror(errno)) + ")");
  if (S_ISDIR(info.st_mode)) fail(path, "is a directory, not an image file");
  if (!S_ISREG(info.st_mode))
    fail(path, "is not a regular file (a FIFO, socket or device), not an image file");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, "cannot open (" + std::string(std::strerror(errno)) + ")");
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  // fstat again: the path may have been swapped since stat.
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    fail(path, "is not a regular file, not an image file");
  if (size_t(info.st_size) > kMaxImageFileBytes)
    fail(path, "the file is " + std::to_string(info.st_size) + " bytes, more than the " +
                   std::to_string(kMaxImageFileBytes) + " an image file may have");
  // One byte more than the size is asked for, so a file that grows meanwhile is caught.
  std::vector<uint8_t> bytes(size_t(info.st_size) + 1);
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "read error (" + std::string(std::strerror(errno)) + ")");
    if (n == 0) break;
    got += size_t(n);
  }
  if (got == bytes.size()) fail(path, "the file grew while it was read");
  bytes.resize(got);
  return decode_image(bytes, path, want);
}

}  // namespace starcnn
