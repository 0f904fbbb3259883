// A record of the tasks submitted through insert_task() while a TaskLog lives, taken instead of
// submitting them: each task's op and the worker kinds it may run on. Tests read it to check where
// a plan sends every task, on a machine that lacks some of those workers (a CUDA-only task cannot
// be submitted without a CUDA worker).
#pragma once

#include "codelets/support/codelet_support.h"

#include <string>
#include <vector>

namespace starcnn {

struct LoggedTask {
  std::string op;
  Where where = Where::any;
};

class TaskLog {
 public:
  TaskLog();  // one at a time
  ~TaskLog();
  TaskLog(const TaskLog &) = delete;
  TaskLog &operator=(const TaskLog &) = delete;
  const std::vector<LoggedTask> &tasks() const { return tasks_; }

 private:
  friend bool log_instead_of_submitting(const char *op, Where where);
  std::vector<LoggedTask> tasks_;
};

// True when a TaskLog is recording (the task is logged and must not be submitted).
bool log_instead_of_submitting(const char *op, Where where);

}  // namespace starcnn
