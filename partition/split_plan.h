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
  // The part's work is cut by samples into this many tasks (CPU parts: one per CPU worker), each
  // its own sample block of the batch with every filter of the part: the input's im2col is made
  // once per sample, never repeated per task.
  int tasks = 1;
};

struct SplitPlan {
  std::vector<SplitPart> parts;

  int filters() const;
  bool is_whole() const { return parts.size() == 1; }
  // "3@cpu/2,3@cuda": filters@where, and /tasks where the part is cut (always for CPU parts);
  // parse_split_plan() reads it back as the same plan.
  std::string describe() const;
};

// One task of a plan's part: `part`'s filters on samples [first_sample, first_sample + samples).
struct PartTask {
  size_t part = 0;
  int filters = 0, first_channel = 0;
  Where where = Where::any;
  uint32_t first_sample = 0, samples = 0;
};
// The tasks of `plan` for a batch of n samples: each part cut into min(tasks, n) blocks of
// (nearly) equal samples, in part order.
std::vector<PartTask> part_tasks(const SplitPlan &plan, uint32_t n);

// What a plan needs to know about the machine.
struct MachineWorkers {
  int cpu = 1;
  int cuda = 0;
};

// Parses one layer's plan for a layer of `filters` output channels:
//   none        one part, any worker
//   cuda, cpu   one part on that kind of worker (as a whole-network plan: every op there)
//   cudaN       one part on the worker of CUDA device N (N from 0; as a whole-network plan:
//               every op there)
//   samples:K[/M][xB]  the sample split (see SampleSplit); the layer itself is whole on CUDA
//   even:K      K parts of (nearly) equal size, any worker
//   cpu:N       N filters on the CPU workers (cut by samples into one task per CPU worker), the
//               rest on CUDA workers
//   LIST        comma-separated parts F@WHERE[/T], WHERE one of cpu, cuda, cudaN, any, T tasks
//               cut by samples (default: one per CPU worker for cpu parts, 1 otherwise); the F
//               must sum to filters
// Throws std::invalid_argument with a message that quotes the text and says what is wrong.
SplitPlan parse_split_plan(const std::string &text, int filters, const MachineWorkers &workers);

// The split by samples, `samples:K[/M][xB]`: each step, K samples of the batch go through the
// whole network on the CPU workers, as M micro-batches (independent task chains; 0: one per CPU
// worker, of 16 samples or more), and the rest through it on the CUDA workers; the parameter
// gradients of both are summed. Weights live on the CUDA side. With xB the pinned chains take
// blocks of B samples from all of them while any is left (model/nn/chain_claims.h), so that a
// faster CPU worker does more.
struct SampleSplit {
  int cpu_samples = 0;
  int cpu_micro_batches = 0;
  int cpu_block = 0;
  std::string describe() const;  // "samples:K", "samples:K/M", "samples:K/MxB", "samples:KxB"
};
// True when `text` is a sample split (then *split holds it); throws std::invalid_argument for a
// malformed one.
bool parse_sample_split(const std::string &text, SampleSplit *split);

// A network's plans: "PLAN" for every convolution, or "PLAN;conv2=PLAN;..." to override layers.
struct NetworkPlanText {
  std::string default_plan = "none";
  std::vector<std::pair<std::string, std::string>> overrides;  // layer name, plan text
  const std::string &plan_for(const std::string &layer) const;
};
NetworkPlanText parse_network_plan(const std::string &text);

// Where a network's ops outside the convolutions' parts run under `plans` (ReLU, pooling, linear
// layers, the loss, merges, and the updates of parameters that no part places): the whole-network
// plan says it (`cpu`: the CPU workers; `none` and `even:K`: any worker, the scheduler decides);
// every other plan keeps them on the CUDA workers where there are any, so that whole layers never
// drift across the bus. The data-loading task always runs on a CPU worker.
Where home_of(const NetworkPlanText &plans, const MachineWorkers &workers);

}  // namespace starcnn
