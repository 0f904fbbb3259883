// How the training benchmarks time steps, shared by train_benchmark (a real machine) and simulate
// (StarPU's SimGrid mode), so a prediction and a measurement come from the same procedure: after
// warm-up rounds (which also count the tasks each kind of worker runs), steps run in rounds of
// `round` steps (one Trainer epoch each: steps pipeline inside a round and the host waits at its
// end); step_ms is the median over rounds of round time / steps. Time is starpu_timing_now(): the
// wall clock on a real machine, the simulated clock under SimGrid.
#pragma once

#include "model/data/dataset.h"
#include "model/io/json.h"
#include "model/nn/network_spec.h"
#include "model/train/plan_search.h"
#include "partition/split_plan.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace starcnn {

struct TimingOptions {
  long steps = 20, warmup = 10, round = 5, seed = 1, micro_batches = 0;
  CpuChains pin_cpu_chains = CpuChains::automatic;  // TrainConfig::pin_cpu_chains
  bool fuse_layers = true;                          // TrainConfig::fuse_layers
  CudaChain cuda_chain = CudaChain::graph;          // TrainConfig::cuda_chain
  double max_seconds = 20, lr = 0.01;
};

struct TrainTiming {
  std::string plan;  // as run: "PLAN", or "PLAN -> RESOLVED" where layers were planned auto
  int micro_batches = 1;
  double step_ms = 0, mean_ms = 0, min_ms = 0;
  size_t warmup_steps = 0, timed_steps = 0, rounds = 0;
  uint64_t tasks_per_step = 0;
  double cpu_tasks_per_step = 0, cuda_tasks_per_step = 0;
};

// Times training steps of `spec` at `batch` samples on `data` (batch * round samples or more)
// under `plan` (not the measured auto search, which the caller resolves first; per-layer auto is
// resolved here from the perf models) on the running StarPU's `workers`. --max-seconds caps the
// warm-up and the timing, each.
TrainTiming time_training(const NetworkSpec &spec, const Dataset &data, size_t batch,
                          const std::string &plan, const MachineWorkers &workers,
                          const TimingOptions &options);

// train's measured search (--plan auto) on the running StarPU, with the benchmarks' training
// settings (options' lr and seed, momentum 0.9, a loss reading per round); prints its candidates
// on stderr. `options.micro_batches` takes the winner's where it was 0. `restart_runtime`:
// PlanSearchOptions'.
PlanSearch search_plan_for_timing(const NetworkSpec &spec, const Dataset &data, size_t batch,
                                  const MachineWorkers &workers, TimingOptions &options,
                                  std::function<void()> restart_runtime = {});

// The measured search's candidates: plan, micro_batches (0: the plan's own), predicted_ms (null:
// none) and measured_ms (null when it could not run).
json::Array candidates_json(const PlanSearch &search);

}  // namespace starcnn
