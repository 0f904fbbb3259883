#include "model/data/idx_reader.h"

#include "model/io/regular_file.h"

#include <string>

namespace starcnn {
namespace {

// Far above MNIST's 47 MB; the header's promise is checked against the real size before reading.
constexpr uint64_t kIdxMaxBytes = uint64_t(4) << 30;

uint32_t big_endian_u32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

// Reads and checks the magic number, then the `words` header words that follow it.
std::vector<uint32_t> read_header(RegularFile &file, uint32_t magic, size_t words,
                                  const char *kind) {
  const size_t header_size = 4 * (1 + words);
  const auto truncated = [&] {
    throw_file_error(file.path(), "truncated: " + std::to_string(file.size()) +
                                      " bytes, shorter than the " + std::to_string(header_size) +
                                      "-byte header of IDX " + kind);
  };
  uint8_t bytes[4];
  if (file.size() < 4) truncated();
  file.read(bytes, 4);
  const uint32_t got = big_endian_u32(bytes);
  if (got != magic)
    throw_file_error(file.path(), "bad magic number " + std::to_string(got) + " (IDX " + kind +
                                      " files start with " + std::to_string(magic) + ")");
  if (file.size() < header_size) truncated();
  std::vector<uint32_t> header(words);
  for (uint32_t &word : header) {
    file.read(bytes, 4);
    word = big_endian_u32(bytes);
  }
  return header;
}

void check_size(const RegularFile &file, size_t header_size, size_t payload) {
  const size_t want = header_size + payload;
  if (file.size() < want)
    throw_file_error(file.path(), "truncated: " + std::to_string(file.size()) +
                                      " bytes, the header promises " + std::to_string(want));
  if (file.size() > want)
    throw_file_error(file.path(), "corrupt: " + std::to_string(file.size()) +
                                      " bytes, the header promises only " + std::to_string(want));
}

}  // namespace

IdxImages read_idx_images(const std::string &path, size_t rows, size_t cols) {
  RegularFile file(path, kIdxMaxBytes, "an IDX file");
  const auto header = read_header(file, kIdxImagesMagic, 3, "images");
  IdxImages images;
  images.count = header[0];
  images.rows = header[1];
  images.cols = header[2];
  if (images.rows != rows || images.cols != cols)
    throw_file_error(path, "images are " + std::to_string(images.rows) + "x" +
                               std::to_string(images.cols) + ", expected " + std::to_string(rows) +
                               "x" + std::to_string(cols));
  check_size(file, 16, images.count * rows * cols);
  images.pixels.resize(images.count * rows * cols);
  file.read(images.pixels.data(), images.pixels.size());
  return images;
}

std::vector<uint8_t> read_idx_labels(const std::string &path) {
  RegularFile file(path, kIdxMaxBytes, "an IDX file");
  const auto header = read_header(file, kIdxLabelsMagic, 1, "labels");
  check_size(file, 8, header[0]);
  std::vector<uint8_t> labels(header[0]);
  file.read(labels.data(), labels.size());
  return labels;
}

}  // namespace starcnn
