// The split plan of one convolution: how its filters are cut into parts, where each part may run,
// and how many tasks a part is cut into (by filters) so that every CPU worker has work.
#pragma once

#include "codelets/support/codelet_support.h"

#include <string>
#include <vector>

namespace starcnn {

struct SplitPart {
  int filters = 0;  // output channels of this part
  Where where = Where::any;
  int tasks = 1;  // the part is cut by filters into this many tasks (CPU parts: one per worker)
};

struct SplitPlan {
  std::vector<SplitPart> parts;

  int filters() const;
  bool is_whole() const { return parts.size() == 1; }
  // "3@cpu/2,3@cuda": filters@where, and /tasks where the part is cut (always for CPU parts);
  // parse_split_plan() reads it back as the same plan.
  std::string describe() const;
};

// What a plan needs to know about the machine.
struct MachineWorkers {
  int cpu = 1;
  int cuda = 0;
};

// Parses one layer's plan for a layer of `filters` output channels:
//   none        one part, any worker
//   even:K      K parts of (nearly) equal size, any worker
//   cpu:N       N filters on the CPU workers (cut by filters into one task per CPU worker), the
//   rest
//               on CUDA workers
//   LIST        comma-separated parts F@WHERE[/T], WHERE one of cpu, cuda, any, T tasks cut by
//   filters
//               (default: one per CPU worker for cpu parts, 1 otherwise); the F must sum to filters
// Throws std::invalid_argument with a message that quotes the text and says what is wrong.
SplitPlan parse_split_plan(const std::string &text, int filters, const MachineWorkers &workers);

// A network's plans: "PLAN" for every convolution, or "PLAN;conv2=PLAN;..." to override layers.
struct NetworkPlanText {
  std::string default_plan = "none";
  std::vector<std::pair<std::string, std::string>> overrides;  // layer name, plan text
  const std::string &plan_for(const std::string &layer) const;
};
NetworkPlanText parse_network_plan(const std::string &text);

}  // namespace starcnn
