#include "apps/cli/cpu_chains_option.h"

namespace starcnn {

void add_cpu_chains_option(ArgParser &args, std::string *mode) {
  args.add_choice("cpu-chains", {"auto", "pinned", "scheduled"},
                  "the CPU micro-batches of a step: each on a CPU worker of its own (pinned: its "
                  "tasks skip the scheduler and its data stays in one core's caches, but a "
                  "layer's backward tasks no longer run side by side; only with 2 to CPU-workers "
                  "micro-batches), each task wherever the scheduler puts it (scheduled), or auto: "
                  "a sample split's CPU chains pinned (they run beside CUDA workers under dmda or "
                  "dmdas), a CPU plan's scheduled",
                  mode);
}

CpuChains parse_cpu_chains(const std::string &mode) {
  return mode == "pinned"      ? CpuChains::pinned
         : mode == "scheduled" ? CpuChains::scheduled
                               : CpuChains::automatic;
}

}  // namespace starcnn
