#include "apps/cli/cpu_chains_option.h"

namespace starcnn {

void add_cpu_chains_option(ArgParser &args, std::string *mode) {
  args.add_choice("cpu-chains", {"pinned", "scheduled"},
                  "the CPU micro-batches of a step: each on a CPU worker of its own (pinned: its "
                  "tasks skip the scheduler's choice and its data stays in one core's caches; "
                  "only when there are 2 or more and no more than CPU workers) or each task "
                  "wherever the scheduler puts it",
                  mode);
}

bool pinned_cpu_chains(const std::string &mode) {
  return mode == "pinned";
}

}  // namespace starcnn
