// The `auto` plan as train runs it: a few whole-step candidates are measured and the fastest is
// kept, so auto never loses to the best single device by more than the measurement's noise.
//   cuda        every op on the CUDA workers (the GPU alone)
//   cpu         every op on the CPU workers, one micro-batch per worker (the CPU alone)
//   filters     each conv split by filters as the perf-model chooser predicts best
//               (plan_calibration.h), when it gives the CPU workers any filters
//   samples:K   the sample split around K = batch * T_cuda / (T_cuda + T_cpu), the share that
//               would end both sides together, from the two single-device steps just measured;
//               tried at three shares around it, then halfway from the fastest of them towards
//               each side, when the CPU alone is not hopelessly slower; every share moved to
//               the nearest that cuts into CPU chains of equal length (even_chain_share)
//   samples:KxB the fastest of those shares, and one an eighth larger, with chains that claim
//               blocks of B samples of each other's (claim_block_samples; not simulated)
// With several CUDA workers, also (the GPUs against each other; the CPU candidates as above):
//   cuda0                   the first GPU alone, instead of cuda (which lets the scheduler
//                           spread whole ops over the GPUs)
//   cuda, N micro-batches   the batch cut into one micro-batch per GPU (samples across GPUs)
//   filters across GPUs     every conv's filters cut evenly over the GPUs, each part pinned to
//                           its device (filters_across_gpus)
// Steps are timed with starpu_timing_now(): under StarPU's SimGrid mode (perf/simulate) the
// search measures the simulated machine.
// Each candidate trains a throw-away copy of the network for a few steps on the real data.
#pragma once

#include "model/data/dataset.h"
#include "model/nn/network_spec.h"
#include "model/runtime/runtime.h"
#include "model/train/plan_calibration.h"
#include "model/train/trainer.h"
#include "partition/split_plan.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace starcnn {

struct PlanSearchOptions {
  // Untimed steps of each candidate (the first ones set up buffers), then timed ones. With 3 and
  // 6, MPS lenet b256's sample splits measured 5.3-6.3 ms in the search against 3.5-3.8 ms run
  // alone for 2 s (perf/results/h200-2026-12-03-u): longer, to leave set-up costs out.
  int warmup_steps = 5;
  int timed_steps = 10;
  // Then the candidates within refine_within of the fastest are measured again for about
  // refine_seconds (0: not); the second measurement decides.
  double refine_within = 1.5;
  double refine_seconds = 0.5;
  // Sample splits are tried only while the CPU alone is at most this many times slower than
  // the GPU alone (beyond it, the CPU's share of the ideal step is under 1/(1 + ratio)).
  double max_cpu_slowdown = 12.0;
  int filter_candidates = 9;  // CPU shares per layer the filter chooser calibrates and weighs
  // Restarts StarPU (same workers): called before a candidate that runs on every worker when an
  // earlier one parked workers, whose scheduling contexts would otherwise slow it
  // (parked_workers.h). Empty: no restart (under StarPU-MPI, or while tracing).
  std::function<void()> restart_runtime;
};

struct PlanCandidate {
  std::string plan;          // --plan text
  long micro_batches = 0;    // 0: the plan's own (apply_plan's default)
  double predicted_ms = -1;  // < 0: no prediction (the single-device steps are only measured)
  double measured_ms = 0;
  double first_ms = 0;  // > 0: its first, shorter measurement, before the search measured again
  std::string failure;  // why it could not run, if it could not
};

struct PlanSearch {
  std::string plan;        // the winner's --plan text (resolved: no `auto` left in it)
  long micro_batches = 0;  // the winner's (0: its plan's own)
  std::vector<PlanCandidate> candidates;
  std::optional<AutoPlanning> filters;  // the chooser's filter plan, when one was made
  double seconds = 0;
};

// Needs StarPU started. `config` is the run's (batch, learning rate, ...); its micro-batch and
// sample-split settings are replaced per candidate. Without CUDA workers the answer is `cpu`,
// unmeasured.
PlanSearch search_plans(const NetworkSpec &spec, const Dataset &train, const TrainConfig &config,
                        const MachineWorkers &workers,
                        const PlanSearchOptions &options = PlanSearchOptions());

// "cuda;conv1=3@cuda0,3@cuda1;conv2=8@cuda0,8@cuda1": every conv's filters cut as evenly as they
// go over CUDA devices 0..gpus-1 (a conv of fewer filters than GPUs over its first ones).
std::string filters_across_gpus(const NetworkSpec &spec, int gpus);

// The CPU samples of the first sample splits a search measures: 0.6, 1 and 1.4 times the share
// that would end both sides together, batch * gpu_ms / (gpu_ms + cpu_ms), each within 1 ..
// batch - 1, without repeats.
std::vector<size_t> first_sample_shares(size_t batch, double gpu_ms, double cpu_ms);
// The next ones, from the first three and their measured steps: halfway from the fastest towards
// each of its neighbours (past the first or last, as far outwards as the middle one lies
// inwards), within 1 .. batch - 1, without repeats of `shares`; none unless there are three
// shares and a finite fastest step.
std::vector<size_t> next_sample_shares(const std::vector<size_t> &shares,
                                       const std::vector<double> &measured_ms, size_t batch);

// Whether `plans` asks for the measured search (a bare `auto`; `conv2=auto` asks for the filter
// chooser alone, plan_calibration.h).
bool is_measured_auto(const NetworkPlanText &plans);

// True when every op of `plan` (a whole-network plan text) runs on CUDA workers, so that the CPU
// workers would only load batches: the network's home (home_of) and every convolution's parts are
// cuda or cudaN (no sample split, no CPU or any-worker part, no per-layer auto).
bool leaves_cpu_workers_idle(const NetworkSpec &spec, const std::string &plan,
                             const MachineWorkers &workers);

// The CPU workers StarPU should run `plan` with: 1 when the plan leaves them idle, there are
// several and STARPU_NCPU does not fix their number; -1 (keep them all) otherwise. Idle CPU
// workers of StarPU 1.3 poll without sleeping, and on the H200 machine 15 of them made the GPU's
// steps 1.05-1.33x slower than one (interleaved measurements, perf/results/h200-2026-12-03-g);
// with one, the data-loading tasks still have their worker.
int cpu_workers_for_plan(const NetworkSpec &spec, const std::string &plan,
                         const MachineWorkers &workers);

// Restarts `runtime` with `options` and the CPU workers cpu_workers_for_plan asks for, when it
// asks for a number, when parking's contexts remain (holds_parking_contexts) or `after_search`
// (a search's candidates leave a StarPU slower than a fresh one); returns whether it did (train
// and train_benchmark's cpu+gpu run auto's choice this way). Never after_search under SimGrid.
bool restart_for_plan(std::optional<Runtime> &runtime, RuntimeOptions options,
                      const NetworkSpec &spec, const std::string &plan, bool after_search = false);

// What train builds for a --plan text on these workers: the TrainConfig's micro-batches and
// sample split (a sample split, or a plan that keeps the network on the CPU, changes them).
void apply_plan(const NetworkPlanText &plans, const MachineWorkers &workers, long micro_batches,
                TrainConfig &config);

// The micro-batches a run of the search's winner uses: the user's `requested` count where one was
// given (> 0), else the winner's (0: its plan's own).
long chosen_micro_batches(const PlanSearch &search, long requested);

// "auto: cuda measured 1.234 ms/step" lines, the winner marked.
std::vector<std::string> describe(const PlanSearch &search);

}  // namespace starcnn
