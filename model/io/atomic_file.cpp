#include "model/io/atomic_file.h"

#include <dirent.h>
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

std::string directory_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// Removes the regular files named PATH.tmp.XXXXXX (mkstemp's six characters) beside path.
void remove_stale_temporaries(const std::string &path) {
  const std::string dir = directory_of(path);
  const size_t slash = path.rfind('/');
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR *listing = opendir(dir.c_str());
  if (!listing) return;
  std::vector<std::string> stale;
  while (const dirent *entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0 &&
        name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                               prefix.size()) == std::string::npos)
      stale.push_back(dir + "/" + name);
  }
  closedir(listing);
  for (const std::string &file : stale) {
    struct stat st {};
    if (lstat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) unlink(file.c_str());
  }
}

}  // namespace

void check_writable_destination(const std::string &path) {
  const std::string dir = directory_of(path);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0)
    throw AtomicFileError(system_error("cannot write " + path + ": no directory", dir));
  if (!S_ISDIR(st.st_mode))
    throw AtomicFileError("cannot write " + path + ": " + dir + " is not a directory");
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw AtomicFileError("cannot write " + path + ": it is a directory");
  // Creating a file is the only sure test (permissions, read-only mounts, ACLs).
  std::string probe = path + ".tmp.XXXXXX";
  std::vector<char> name(probe.begin(), probe.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0)
    throw AtomicFileError(system_error("cannot write " + path + ": cannot create a file in", dir));
  close(fd);
  unlink(name.data());
}

void write_file_atomically(const std::string &path, const std::string &bytes) {
  const std::string dir = directory_of(path);
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
  remove_stale_temporaries(path);
}

}  // namespace starcnn
