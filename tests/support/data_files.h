// Test helpers for the data set readers: a temporary folder removed at the end of the test, files
// written byte by byte in the IDX and CIFAR-10 formats, and random pixels.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace starcnn::testing {

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("starcnn-data-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string &name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, int max = 255) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, max);
  std::vector<uint8_t> v(n);
  for (auto &b : v) b = uint8_t(dist(gen));
  return v;
}

inline void write_bytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline void append_big_endian(std::vector<uint8_t> &out, uint32_t word) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(word >> shift));
}

// The bytes of an IDX images file: magic 0x00000803, count, rows, cols, then the pixels.
inline std::vector<uint8_t> idx_images_bytes(const std::vector<uint8_t> &pixels, uint32_t count,
                                             uint32_t rows, uint32_t cols,
                                             uint32_t magic = 0x00000803) {
  std::vector<uint8_t> out;
  append_big_endian(out, magic);
  append_big_endian(out, count);
  append_big_endian(out, rows);
  append_big_endian(out, cols);
  out.insert(out.end(), pixels.begin(), pixels.end());
  return out;
}

// The bytes of an IDX labels file: magic 0x00000801, count, then the labels.
inline std::vector<uint8_t> idx_labels_bytes(const std::vector<uint8_t> &labels,
                                             uint32_t magic = 0x00000801) {
  std::vector<uint8_t> out;
  append_big_endian(out, magic);
  append_big_endian(out, uint32_t(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

// CIFAR-10 records: per image one label byte then its 3 * 32 * 32 pixel bytes.
inline std::vector<uint8_t> cifar10_bytes(const std::vector<uint8_t> &labels,
                                          const std::vector<uint8_t> &pixels) {
  const size_t image = 3 * 32 * 32;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    out.push_back(labels[i]);
    out.insert(out.end(), pixels.begin() + long(i * image), pixels.begin() + long((i + 1) * image));
  }
  return out;
}

// Runs f, which must throw std::exception whose message contains every one of the parts.
inline void expect_error(const std::function<void()> &f, const std::vector<std::string> &parts) {
  try {
    f();
  } catch (const std::exception &e) {
    const std::string message = e.what();
    for (const auto &part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
    return;
  }
  ADD_FAILURE() << "no exception thrown";
}

}  // namespace starcnn::testing
