#include "codelets/support/task_log.h"

#include <atomic>
#include <stdexcept>

namespace starcnn {
namespace {
std::atomic<TaskLog *> active_log{nullptr};
}  // namespace

TaskLog::TaskLog() {
  TaskLog *none = nullptr;
  if (!active_log.compare_exchange_strong(none, this))
    throw std::logic_error("a TaskLog is already recording");
}

TaskLog::~TaskLog() {
  active_log.store(nullptr);
}

bool log_instead_of_submitting(const char *op, Where where) {
  TaskLog *log = active_log.load();
  if (!log) return false;
  log->tasks_.push_back({op, where});
  return true;
}

}  // namespace starcnn
