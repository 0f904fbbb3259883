// The fuzz targets of readers that take a path: the input is written to one file per process,
// rewritten for every input, in /dev/shm where there is one (a disk-backed /tmp managed 200
// rewrites a second here, /dev/shm 100,000).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace starcnn::fuzz {

// The file, removed when the process exits.
struct InputFile {
  InputFile() {
    const char *tmp = std::getenv("TMPDIR");
    const std::string dir =
        access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (tmp && *tmp ? tmp : "/tmp");
    path = dir + "/starcnn-fuzz-XXXXXX";
    fd = mkstemp(path.data());
    if (fd < 0) std::abort();
  }
  ~InputFile() {
    close(fd);
    unlink(path.c_str());
  }
  std::string path;
  int fd = -1;
};

inline std::string input_file(const uint8_t *data, size_t size) {
  static InputFile file;
  const int fd = file.fd;
  const std::string &path = file.path;
  if (ftruncate(fd, 0) != 0) std::abort();
  for (size_t done = 0; done < size;) {
    const ssize_t wrote = pwrite(fd, data + done, size - done, off_t(done));
    if (wrote <= 0) std::abort();
    done += size_t(wrote);
  }
  return path;
}

}  // namespace starcnn::fuzz
