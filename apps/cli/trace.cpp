#include "apps/cli/trace.h"

#include "apps/cli/args.h"
#include "apps/cli/restart.h"
#include "apps/cli/version.h"
#include "model/runtime/fxt_trace.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

extern char **environ;

namespace starcnn {
namespace fs = std::filesystem;

namespace {

fs::path self_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self;
}

bool holds_libstarpu(const fs::path &dir) {
  std::error_code ec;
  return !dir.empty() && fs::exists(dir / "libstarpu-1.3.so.9", ec);
}

// Set in the restarted process, so a library folder without FxT cannot restart it again.
const char *const kRestartedForTrace = "STARCNN_RESTARTED_FOR_TRACE";

std::string fxt_lib_dir() {
  if (const char *env = std::getenv("STARCNN_FXT_STARPU_LIB")) return env;
  const fs::path self = self_path();
  const fs::path bundled = self.empty() ? fs::path() : self.parent_path().parent_path() / "lib/fxt";
  if (holds_libstarpu(bundled)) return bundled.string();
#ifdef STARCNN_FXT_STARPU_LIB_DIR
  return STARCNN_FXT_STARPU_LIB_DIR;
#else
  return "";
#endif
}

// trace_report.py: next to the running executable (the GPU bundle's bin/), else in the source
// tree this program was built from.
std::string find_report_script() {
  std::error_code ec;
  const fs::path self = self_path();
  if (!self.empty() && fs::is_regular_file(self.parent_path() / "trace_report.py", ec))
    return (self.parent_path() / "trace_report.py").string();
#ifdef STARCNN_SOURCE_DIR
  const fs::path source = fs::path(STARCNN_SOURCE_DIR) / "perf" / "trace_report.py";
  if (fs::is_regular_file(source, ec)) return source.string();
#endif
  return "";
}

// Runs `argv` (argv[0] looked up on PATH) and waits; -1 when it cannot start, else its exit
// status (-2: killed by a signal).
int run_program(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

}  // namespace

void ensure_starpu_with_fxt(char **argv) {
  if (loaded_starpu_has_fxt()) return;
  const std::string dir = fxt_lib_dir();
  if (std::getenv(kRestartedForTrace))
    throw UsageError("--trace: the libstarpu in " + dir +
                     " has no FxT support (set STARCNN_FXT_STARPU_LIB to the lib/ folder of a "
                     "StarPU built --with-fxt)");
  if (!holds_libstarpu(dir))
    throw UsageError("--trace needs StarPU built with FxT, and none was found" +
                     (dir.empty() ? std::string() : " (no libstarpu-1.3.so.9 in " + dir + ")") +
                     "; scripts/setup-deps builds one, or set STARCNN_FXT_STARPU_LIB to its lib/");
  const char *old = std::getenv("LD_LIBRARY_PATH");
  const std::string path = dir + (old && *old ? ":" + std::string(old) : std::string());
  setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  setenv(kRestartedForTrace, "1", 1);
  std::printf("trace: restarting on the StarPU with FxT (%s)\n", dir.c_str());
  throw std::runtime_error("--trace: cannot restart on StarPU with FxT: " + restart_self(argv));
}

void prepare_trace_dir(const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError("--trace: cannot create the folder " + dir +
                     (ec ? ": " + ec.message() : std::string()));
}

bool finish_trace(const std::string &dir, int ranks) {
  const std::string tool = find_fxt_tool();
  if (tool.empty()) {
    std::fprintf(stderr,
                 "train: starpu_fxt_tool not found (next to train, in StarPU's bin/ or on PATH): "
                 "the raw FxT trace stays in %s\n",
                 dir.c_str());
    return false;
  }
  std::vector<std::string> made;
  try {
    made = convert_fxt_trace(dir, tool, ranks);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "train: trace: %s\n", e.what());
    return false;
  }
  std::string names;
  for (const std::string &name : made) names += " " + name;
  std::printf("trace: %s holds%s\n", dir.c_str(), names.c_str());

  const std::string script = find_report_script();
  if (script.empty()) {
    std::printf("trace: trace_report.py not found; run perf/trace_report.py %s\n", dir.c_str());
    return true;
  }
  const int status = run_program({"python3", script, dir});
  if (status == -1)
    std::printf("trace: python3 not found; for trace.png and summary.txt run: python3 %s %s\n",
                script.c_str(), dir.c_str());
  else if (status != 0)
    std::fprintf(stderr, "train: trace: %s failed (status %d)\n", script.c_str(), status);
  return true;
}

}  // namespace starcnn
