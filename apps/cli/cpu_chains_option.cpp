#include "apps/cli/cpu_chains_option.h"

namespace starcnn {

void add_cpu_chains_option(ArgParser &args, std::string *mode) {
  args.add_choice(
      "cpu-chains", {"auto", "pinned", "scheduled"},
      "the CPU micro-batches of a step: each on a CPU worker of its own (pinned: with "
      "fusion on the micro-batch runs as one task, its data in one core's caches, but a "
      "layer's backward halves no longer run side by side; only with up to "
      "CPU-workers micro-batches), each layer task wherever the scheduler puts it "
      "(scheduled), or auto: a sample split's CPU chains pinned, and a CPU plan's too "
      "for a network small enough to cut into chains of several samples (lenet; wide "
      "stays scheduled)",
      mode);
}

CpuChains parse_cpu_chains(const std::string &mode) {
  return mode == "pinned"      ? CpuChains::pinned
         : mode == "scheduled" ? CpuChains::scheduled
                               : CpuChains::automatic;
}

}  // namespace starcnn
