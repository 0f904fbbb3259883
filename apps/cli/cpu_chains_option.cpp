#include "apps/cli/cpu_chains_option.h"

namespace starcnn {

void add_cpu_chains_option(ArgParser &args, std::string *mode) {
  args.add_choice("cpu-chains", {"pinned", "scheduled"},
                  "the CPU micro-batches of a step: each task wherever the scheduler puts it "
                  "(scheduled), or each micro-batch on a CPU worker of its own (pinned: its "
                  "tasks skip the scheduler and its data stays in one core's caches, but a "
                  "layer's backward tasks no longer run side by side; only with 2 to CPU-workers "
                  "micro-batches)",
                  mode);
}

bool pinned_cpu_chains(const std::string &mode) {
  return mode == "pinned";
}

}  // namespace starcnn
