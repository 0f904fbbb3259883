#include "apps/cli/restart.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace starcnn {

std::string restart_self(char **argv) {
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  return std::strerror(errno);
}

}  // namespace starcnn
