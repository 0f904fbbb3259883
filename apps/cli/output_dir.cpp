#include "apps/cli/output_dir.h"

#include "model/io/atomic_file.h"

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace starcnn {

void prepare_output_dir(const std::string &dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw AtomicFileError("the folder name is empty");
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  if (fs::exists(status) && !fs::is_directory(status))
    throw AtomicFileError("cannot use " + dir + ": it exists and is not a directory");
  if (!fs::exists(status) && !fs::create_directories(dir, error) && error)
    throw AtomicFileError("cannot create " + dir + ": " + error.message());
  // The fixed names first: a folder named last.safetensors would only fail after an epoch.
  check_writable_destination(last_checkpoint_path(dir));
  check_writable_destination(best_checkpoint_path(dir));
}

std::string epoch_checkpoint_path(const std::string &dir, int64_t epoch) {
  char name[48];
  std::snprintf(name, sizeof name, "epoch-%03lld.safetensors", (long long)epoch);
  return dir + "/" + name;
}

std::string last_checkpoint_path(const std::string &dir) {
  return dir + "/last.safetensors";
}
std::string best_checkpoint_path(const std::string &dir) {
  return dir + "/best.safetensors";
}

bool BestEpoch::offer(double score) {
  if (best_ && score <= *best_) return false;
  best_ = score;
  return true;
}

}  // namespace starcnn
