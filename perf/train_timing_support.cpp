#include "perf/train_timing_support.h"

#include "model/nn/parameter_set.h"
#include "model/train/chain_samples.h"
#include "model/train/plan_calibration.h"
#include "model/train/plan_search.h"
#include "model/train/trainer.h"
#include "perf/bench_support.h"

#include <starpu.h>
#include <starpu_profiling.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>
#include <vector>

namespace starcnn {
namespace {

// Runs one warm-up round with StarPU's profiling counters on (they stay off while timing) and
// keeps the tasks each kind of worker ran per step, StarPU's own reduction tasks included.
void warmup_round(Trainer &trainer, size_t epoch, size_t steps, TrainTiming &t) {
  starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w) {
    starpu_profiling_worker_info info;
    starpu_profiling_worker_get_info(int(w), &info);  // reading resets the counters
  }
  const std::atomic<bool> no_stop{false};
  trainer.train_epoch(epoch, nullptr, no_stop);
  long cpu = 0, cuda = 0;
  for (unsigned w = 0; w < workers; ++w) {
    starpu_profiling_worker_info info;
    starpu_profiling_worker_get_info(int(w), &info);
    (starpu_worker_get_type(int(w)) == STARPU_CUDA_WORKER ? cuda : cpu) += info.executed_tasks;
  }
  starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  t.cpu_tasks_per_step = double(cpu) / double(steps);
  t.cuda_tasks_per_step = double(cuda) / double(steps);
  t.warmup_steps += steps;
}

// The benchmarks' training settings: one loss reading per round, at its end.
TrainConfig timing_config(const NetworkSpec &spec, size_t batch, const TimingOptions &o) {
  TrainConfig tc;
  tc.cpu_chain_samples = min_samples_per_cpu_chain(spec);
  tc.batch = batch;
  tc.lr = float(o.lr);
  tc.momentum = 0.9f;
  tc.seed = uint64_t(o.seed);
  tc.log_every = size_t(o.round);
  tc.pin_cpu_chains = o.pin_cpu_chains;
  tc.fuse_layers = o.fuse_layers;
  tc.cuda_chain = o.cuda_chain;
  return tc;
}

double seconds_since(double start_us) {
  return (starpu_timing_now() - start_us) * 1e-6;
}

}  // namespace

TrainTiming time_training(const NetworkSpec &spec, const Dataset &data, size_t batch,
                          const std::string &plan, const MachineWorkers &workers,
                          const TimingOptions &o) {
  TrainTiming t;
  t.plan = plan;
  TrainConfig tc = timing_config(spec, batch, o);
  NetworkPlanText plans = parse_network_plan(plan);
  apply_plan(plans, workers, o.micro_batches, tc);
  const MicroBatchShare share = micro_batch_share(workers, batch, tc.micro_batches);
  if (uses_auto_plan(spec, plans)) {
    const AutoPlanning planning = resolve_auto_plans(spec, plans, share.workers, int(share.batch));
    plans = planning.plans;
    t.plan = t.plan + " -> " + planning.text;
  }
  ParameterSet params(spec, plans, share.workers);
  params.initialize(uint64_t(o.seed));
  t.micro_batches = int(cut_batch(tc, workers.cpu).size());
  Trainer trainer(spec, params, data, tc);
  const size_t round = size_t(o.round);
  const std::atomic<bool> no_stop{false};
  size_t epoch = 0;
  const double warmup_start = starpu_timing_now();
  do {
    warmup_round(trainer, epoch++, round, t);
  } while (t.warmup_steps < size_t(o.warmup) && seconds_since(warmup_start) < o.max_seconds);
  t.tasks_per_step = trainer.tasks_per_step();

  std::vector<double> step_ms;
  const double window = starpu_timing_now();
  while (t.timed_steps < size_t(o.steps)) {
    const double start = starpu_timing_now();
    trainer.train_epoch(epoch++, nullptr, no_stop);
    step_ms.push_back((starpu_timing_now() - start) * 1e-3 / double(round));
    t.timed_steps += round;
    if (seconds_since(window) > o.max_seconds) break;
  }
  t.rounds = step_ms.size();
  t.step_ms = median(step_ms);
  t.min_ms = *std::min_element(step_ms.begin(), step_ms.end());
  double sum = 0;
  for (double ms : step_ms) sum += ms;
  t.mean_ms = sum / double(step_ms.size());
  return t;
}

PlanSearch search_plan_for_timing(const NetworkSpec &spec, const Dataset &data, size_t batch,
                                  const MachineWorkers &workers, TimingOptions &options,
                                  std::function<void()> restart_runtime) {
  PlanSearchOptions search_options;
  search_options.restart_runtime = std::move(restart_runtime);
  PlanSearch search =
      search_plans(spec, data, timing_config(spec, batch, options), workers, search_options);
  for (const std::string &line : describe(search)) std::fprintf(stderr, "%s\n", line.c_str());
  options.micro_batches = chosen_micro_batches(search, options.micro_batches);
  return search;
}

json::Array candidates_json(const PlanSearch &search) {
  json::Array candidates;
  for (const PlanCandidate &c : search.candidates) {
    json::Object item;
    item.string("plan", c.plan).integer("micro_batches", c.micro_batches);
    if (c.predicted_ms < 0)
      item.null("predicted_ms");
    else
      item.fixed("predicted_ms", c.predicted_ms, 4);
    item.number("measured_ms", c.measured_ms);
    candidates.raw(item.text());
  }
  return candidates;
}

}  // namespace starcnn
