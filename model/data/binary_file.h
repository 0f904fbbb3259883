// Binary file reads for the data set readers, with errors that name the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace starcnn {

// Throws std::runtime_error with the message "path: problem".
[[noreturn]] void throw_file_error(const std::string &path, const std::string &problem);

// A regular file open for sequential reading; errors name the file.
class BinaryFile {
 public:
  explicit BinaryFile(const std::string &path);  // throws when missing or not a regular file
  const std::string &path() const { return path_; }
  size_t size() const { return size_; }
  // The next n bytes into dst.
  void read(void *dst, size_t n);

 private:
  std::string path_;
  size_t size_ = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file_;
};

// All bytes of the regular file at path.
std::vector<uint8_t> read_binary_file(const std::string &path);

}  // namespace starcnn
