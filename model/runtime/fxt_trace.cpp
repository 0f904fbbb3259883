#include "model/runtime/fxt_trace.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

extern char **environ;

namespace starcnn {
namespace fs = std::filesystem;

namespace {

bool is_executable(const fs::path &path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

std::map<std::string, fs::file_time_type> file_times(const std::string &dir) {
  std::map<std::string, fs::file_time_type> times;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) times[entry.path().filename().string()] = entry.last_write_time();
  return times;
}

// Runs argv[0] with argv, stdout and stderr into `log`; returns its exit status (-1: killed).
int run_logged(const std::vector<std::string> &argv, const std::string &log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed for " + argv[0]);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string find_fxt_tool() {
  const char *name = "starpu_fxt_tool";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && is_executable(self.parent_path() / name)) return (self.parent_path() / name).string();
#ifdef STARCNN_STARPU_BIN_DIR
  if (is_executable(fs::path(STARCNN_STARPU_BIN_DIR) / name))
    return (fs::path(STARCNN_STARPU_BIN_DIR) / name).string();
#endif
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (end > start && is_executable(candidate)) return candidate.string();
    start = end + 1;
  }
  return "";
}

std::vector<std::string> find_fxt_raw_traces(const std::string &dir, int count) {
  std::vector<std::pair<fs::file_time_type, std::string>> traces;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().filename().string().rfind("prof_file_", 0) == 0)
      traces.emplace_back(entry.last_write_time(), entry.path().string());
  if (traces.size() < size_t(std::max(1, count)))
    throw std::runtime_error(traces.empty()
                                 ? "no FxT trace (prof_file_*) in " + dir +
                                       ": was StarPU built with FxT (--with-fxt)?"
                                 : std::to_string(traces.size()) + " FxT traces (prof_file_*) in " +
                                       dir + " for " + std::to_string(count) + " ranks");
  std::sort(traces.begin(), traces.end());
  std::vector<std::string> newest;
  for (size_t i = traces.size() - size_t(std::max(1, count)); i < traces.size(); ++i)
    newest.push_back(traces[i].second);
  return newest;
}

std::string find_fxt_raw_trace(const std::string &dir) {
  return find_fxt_raw_traces(dir, 1)[0];
}

std::vector<std::string> convert_fxt_trace(const std::string &dir, const std::string &tool,
                                           int ranks) {
  std::vector<std::string> argv{tool};
  for (const std::string &raw : find_fxt_raw_traces(dir, ranks)) {
    argv.push_back("-i");
    argv.push_back(raw);
  }
  argv.push_back("-d");
  argv.push_back(dir);
  const std::string log = (fs::path(dir) / "starpu_fxt_tool.log").string();
  const auto before = file_times(dir);
  const int status = run_logged(argv, log);
  if (status != 0)
    throw std::runtime_error(tool + " failed (exit status " + std::to_string(status) + "), see " +
                             log);
  std::vector<std::string> made;
  for (const auto &[name, time] : file_times(dir)) {
    const auto old = before.find(name);
    if (name != "starpu_fxt_tool.log" && (old == before.end() || old->second != time))
      made.push_back(name);
  }
  if (std::find(made.begin(), made.end(), "paje.trace") == made.end())
    throw std::runtime_error(tool + " made no paje.trace in " + dir + ", see " + log);
  return made;
}

}  // namespace starcnn
