// Bounded reads of regular files, the one way every reader opens a file (data sets, checkpoints,
// network descriptions): the open never blocks (a FIFO), anything but a regular file is refused
// with what it is (a directory, a device such as /dev/zero), and the size is checked against the
// format's limit before a byte is read or allocated. Errors are FileError, "PATH: problem".
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws FileError with the message "path: problem".
[[noreturn]] void throw_file_error(const std::string &path, const std::string &problem);

// A regular file open for sequential reading.
class RegularFile {
 public:
  // Throws when the path is missing, not a regular file, or larger than max_bytes (`what` names
  // the kind of file in that error: "a checkpoint", "a network description").
  RegularFile(const std::string &path, uint64_t max_bytes, const std::string &what);
  ~RegularFile();
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;

  const std::string &path() const { return path_; }
  size_t size() const { return size_; }
  // The next n bytes into dst; throws when the file ends first (it shrank while being read).
  void read(void *dst, size_t n);

 private:
  std::string path_;
  size_t size_ = 0;
  int fd_ = -1;
};

// All bytes of the regular file at path, at most max_bytes of them (else an error naming the
// size, the limit and `what`).
std::string read_regular_file(const std::string &path, uint64_t max_bytes, const std::string &what);

// The machine's physical memory in bytes (the limit of what may be read or built whole).
uint64_t physical_memory_bytes();

}  // namespace starcnn
