#include "model/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace starcnn {
namespace {

std::string system_error(const std::string &what, const std::string &path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

void write_file_atomically(const std::string &path, const std::string &bytes) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string temp = path + ".tmp.XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) throw AtomicFileError(system_error("cannot create a temporary file for", path));
  temp = name.data();

  auto give_up = [&](const std::string &what) {
    std::string message = system_error(what, temp);
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    throw AtomicFileError(message);
  };
  // mkstemp makes the file 0600; give it the usual permissions a new file would get.
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0) give_up("cannot set permissions of");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t wrote = write(fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      if (wrote == 0) errno = EIO;
      give_up("cannot write");
    }
    done += size_t(wrote);
  }
  if (fsync(fd) != 0) give_up("cannot sync");
  int closed = close(fd);
  fd = -1;
  if (closed != 0) give_up("cannot close");
  if (rename(temp.c_str(), path.c_str()) != 0) {
    std::string message = system_error("cannot rename " + temp + " to", path);
    unlink(temp.c_str());
    throw AtomicFileError(message);
  }
  // The rename lasts through a crash only once the directory is synced.
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
}

}  // namespace starcnn
