// task_overhead's JSON line (perf/task_overhead.cpp) as the costs perf/simulate charges per task.
#pragma once

#include "codelets/support/simulated_models.h"

#include <string>

namespace starcnn {

// Which measurement a CPU task is charged.
enum class CpuTaskCost {
  // cpu_handoff_us where the line has it (a dependent task pushed by one CPU worker onto another,
  // as dmda places most of a step's: call h's traces), else cpu_chain_us (lines before it).
  handoff,
  // cpu_chain_us: a chain that dmda keeps on one worker, pushing to itself (the first charge).
  chain,
};

// The costs of one task_overhead line; throws std::runtime_error on a line without submit_us and
// cpu_chain_us. `*cpu_key` (when given) is set to the key that cpu_us came from.
TaskOverheads parse_task_overheads(const std::string &line, CpuTaskCost cost,
                                   std::string *cpu_key = nullptr);

}  // namespace starcnn
