#include "model/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace starcnn {

namespace {

// What a file that is not regular is, for the error.
const char *file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void throw_file_error(const std::string &path, const std::string &problem) {
  throw FileError(path + ": " + problem);
}

RegularFile::RegularFile(const std::string &path, uint64_t max_bytes, const std::string &what)
    : path_(path) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. The type is checked
  // on the open descriptor, so nothing can be swapped in between.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    if (errno == ENOENT) throw_file_error(path, "missing (no such file)");
    if (errno == EISDIR) throw_file_error(path, "is a directory, not " + what);
    throw_file_error(path, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    throw_file_error(path, std::string("cannot stat: ") + std::strerror(error));
  }
  auto refuse = [&](const std::string &problem) {
    ::close(fd_);
    throw_file_error(path, problem);
  };
  if (!S_ISREG(st.st_mode))
    refuse(std::string("not a regular file (it is ") + file_type_name(st.st_mode) + "), expected " +
           what);
  if (uint64_t(st.st_size) > max_bytes)
    refuse(std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) +
           " bytes " + what + " may have");
  size_ = size_t(st.st_size);
  // Reads of a regular file never block; clear the flag all the same.
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read(void *dst, size_t n) {
  char *out = static_cast<char *>(dst);
  while (n > 0) {
    const ssize_t got = ::read(fd_, out, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_file_error(path_, std::string("read error: ") + std::strerror(errno));
    if (got == 0) throw_file_error(path_, "the file shrank while being read");
    out += got;
    n -= size_t(got);
  }
}

std::string read_regular_file(const std::string &path, uint64_t max_bytes,
                              const std::string &what) {
  RegularFile file(path, max_bytes, what);
  std::string bytes(file.size(), '\0');
  file.read(bytes.data(), bytes.size());
  return bytes;
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return uint64_t(1) << 34;  // unknown: assume 16 GiB
  return uint64_t(pages) * uint64_t(page_size);
}

}  // namespace starcnn
