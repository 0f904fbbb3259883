#include "model/data/binary_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace starcnn {

void throw_file_error(const std::string &path, const std::string &problem) {
  throw std::runtime_error(path + ": " + problem);
}

BinaryFile::BinaryFile(const std::string &path) : path_(path), file_(nullptr, &std::fclose) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw_file_error(path, "missing (no such file)");
  if (!std::filesystem::is_regular_file(status)) throw_file_error(path, "not a regular file");
  size_ = std::filesystem::file_size(path, ec);
  if (ec) throw_file_error(path, "cannot get its size: " + ec.message());
  file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file_) throw_file_error(path, std::string("cannot open: ") + std::strerror(errno));
}

void BinaryFile::read(void *dst, size_t n) {
  if (n > 0 && std::fread(dst, 1, n, file_.get()) != n)
    throw_file_error(path_, "read error or file shrank while reading");
}

std::vector<uint8_t> read_binary_file(const std::string &path) {
  BinaryFile file(path);
  std::vector<uint8_t> bytes(file.size());
  file.read(bytes.data(), bytes.size());  // one read of the whole file
  return bytes;
}

}  // namespace starcnn
