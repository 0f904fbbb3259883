#include "model/train/plan_search.h"

#include "model/nn/parameter_set.h"
#include "model/runtime/parked_workers.h"
#include "model/train/chain_samples.h"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace starcnn {
namespace {

// starpu_timing_now(): the wall clock, or the simulated one under SimGrid.
double seconds_since(double start_us) {
  return (starpu_timing_now() - start_us) * 1e-6;
}

// "cuda (4 micro-batches)": the plan text, and the micro-batches where the candidate sets them.
std::string candidate_name(const PlanCandidate &c) {
  return c.plan +
         (c.micro_batches > 0 ? " (" + std::to_string(c.micro_batches) + " micro-batches)" : "");
}

// Milliseconds per step of `plan_text`: warm-up steps, then timed ones, on a throw-away copy of
// the network (its own weights, from the run's seed).
double measure_plan(const NetworkSpec &spec, const Dataset &train, TrainConfig config,
                    const MachineWorkers &workers, const std::string &plan_text, long micro_batches,
                    int64_t warmup, int64_t timed) {
  const NetworkPlanText plans = parse_network_plan(plan_text);
  apply_plan(plans, workers, micro_batches, config);
  ParameterSet params(spec, plans, workers);
  params.initialize(config.seed);
  config.max_steps = warmup + timed;
  config.log_every = size_t(warmup);  // the host reads the loss after the warm-up: a sync point
  config.cosine_lr = false;
  Trainer trainer(spec, params, train, config);
  const std::atomic<bool> no_stop{false};
  std::optional<double> timing;
  int64_t timed_from = 0;
  for (size_t epoch = 0; !trainer.reached_max_steps(); ++epoch) {
    trainer.train_epoch(
        epoch,
        [&](const Progress &p) {
          if (!timing && p.step >= warmup) {
            timing = starpu_timing_now();
            timed_from = p.step;
          }
        },
        no_stop);
  }
  const int64_t steps = trainer.step() - timed_from;
  if (!timing || steps <= 0) throw std::runtime_error("too few steps to time");
  return 1000.0 * seconds_since(*timing) / double(steps);
}

}  // namespace

std::string filters_across_gpus(const NetworkSpec &spec, int gpus) {
  std::string text = "cuda";
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind != LayerKind::conv) continue;
    const int parts = std::min(layer.out, gpus);
    text += ";" + layer.name + "=";
    for (int i = 0; i < parts; ++i)
      text += (i ? "," : "") + std::to_string(layer.out / parts + (i < layer.out % parts)) +
              "@cuda" + std::to_string(i);
  }
  return text;
}

bool is_measured_auto(const NetworkPlanText &plans) {
  return plans.default_plan == "auto" && plans.overrides.empty();
}

bool leaves_cpu_workers_idle(const NetworkSpec &spec, const std::string &plan,
                             const MachineWorkers &workers) {
  const auto on_cuda = [&](const std::string &text, int filters) {
    if (text == "auto" || text == "none") return false;
    const SplitPlan split = parse_split_plan(text, filters, workers);
    return std::all_of(split.parts.begin(), split.parts.end(),
                       [](const SplitPart &p) { return kind_of(p.where) == Where::cuda; });
  };
  try {
    const NetworkPlanText plans = parse_network_plan(plan);
    SampleSplit samples;
    if (parse_sample_split(plans.default_plan, &samples)) return false;
    if (kind_of(home_of(plans, workers)) != Where::cuda) return false;
    for (const LayerSpec &layer : spec.layers)
      if (layer.kind == LayerKind::conv && !on_cuda(plans.plan_for(layer.name), layer.out))
        return false;
    return true;
  } catch (const std::invalid_argument &) {
    return false;  // a malformed plan is reported where the network is built from it
  }
}

int cpu_workers_for_plan(const NetworkSpec &spec, const std::string &plan,
                         const MachineWorkers &workers) {
  if (workers.cpu <= 1 || workers.cuda == 0 || std::getenv("STARPU_NCPU")) return -1;
  return leaves_cpu_workers_idle(spec, plan, workers) ? 1 : -1;
}

bool restart_for_plan(std::optional<Runtime> &runtime, RuntimeOptions options,
                      const NetworkSpec &spec, const std::string &plan, bool after_search) {
  options.ncpu = cpu_workers_for_plan(spec, plan, runtime->workers());
#ifdef STARPU_SIMGRID
  after_search = false;  // the simulated machine keeps no state between candidates worth shedding
#endif
  // Also after the search parked workers: its contexts would outlive it (parked_workers.h). And
  // after any search: under the H200's MPS cap lenet b256's samples:130 took 2.35-2.48 ms right
  // after the search that chose it, against 2.09-2.16 for samples:104 and 126 each in a fresh
  // process (perf/results/h200-2026-12-07-a; on an H100 2.55 against 2.00-2.04, -b).
  if (options.ncpu < 0 && !holds_parking_contexts() && !after_search) return false;
  runtime.reset();
  runtime.emplace(options);
  return true;
}

void apply_plan(const NetworkPlanText &plans, const MachineWorkers &workers, long micro_batches,
                TrainConfig &config) {
  SampleSplit samples;
  config.samples = SampleSplit();
  if (parse_sample_split(plans.default_plan, &samples)) {
    config.samples = samples;
    config.micro_batches = 1;
    return;
  }
  config.micro_batches = choose_micro_batches(micro_batches, workers, config.local_batch(),
                                              home_of(plans, workers), config.cpu_chain_samples);
}

namespace {

// The candidates within options.refine_within of the fastest, measured again over longer windows
// (options.refine_seconds of timed steps, and half that of warm-up, as their first measurement
// gives steps): a few steps' timing left MPS lenet b256's samples:120 at 4.44 ms in the search
// against 3.28 ms run alone for 2 s (perf/results/h200-2026-12-04-a).
template <typename Measure>
void refine(PlanSearch &search, const std::vector<bool> &gpu_only, const Measure &measure,
            const PlanSearchOptions &options) {
#ifdef STARPU_SIMGRID
  return;  // a simulated step has no noise to average out
#endif
  double best = INFINITY;
  for (const PlanCandidate &c : search.candidates) best = std::min(best, c.measured_ms);
  if (!std::isfinite(best) || options.refine_seconds <= 0) return;
  for (size_t i = 0; i < search.candidates.size(); ++i) {
    PlanCandidate &c = search.candidates[i];
    if (!(c.measured_ms <= options.refine_within * best)) continue;
    const double steps = 1000.0 * options.refine_seconds / c.measured_ms;
    const int64_t timed = std::clamp<int64_t>(int64_t(steps), options.timed_steps, 2000);
    const int64_t warmup = std::clamp<int64_t>(int64_t(steps / 2), options.warmup_steps, 1000);
    std::fprintf(stderr, "auto plan: measuring %s again over %lld steps\n",
                 candidate_name(c).c_str(), static_cast<long long>(timed));
    c.first_ms = c.measured_ms;
    measure(c, gpu_only[i], warmup, timed);
  }
}

}  // namespace

PlanSearch search_plans(const NetworkSpec &spec, const Dataset &train, const TrainConfig &config,
                        const MachineWorkers &workers, const PlanSearchOptions &options) {
  PlanSearch search;
  if (workers.cuda == 0) {
    search.plan = "cpu";
    return search;
  }
  // The search's length: the wall clock (the search may restart StarPU, whose clock restarts with
  // it), or the simulated one under SimGrid.
#ifdef STARPU_SIMGRID
  const double start = starpu_timing_now();
  const auto elapsed = [&] { return seconds_since(start); };
#else
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
#endif
  // gpu_only: a candidate whose CPU workers would only load batches is timed with all but one of
  // them parked (model/runtime/parked_workers.h), as it then runs (train restarts StarPU on one CPU
  // worker for it): 15 polling workers made lenet b64's cuda candidate 3.97 ms against 1.86 ms
  // measured parked under the H200's MPS cap (perf/results/h200-2026-12-03-r), and the search
  // chose a slower sample split.
  std::vector<bool> gpu_only_of;  // per candidate: timed with the idle CPU workers parked
  const auto measure = [&](PlanCandidate &c, bool gpu_only, int64_t warmup, int64_t timed) {
    const auto time_it = [&] {
      c.measured_ms =
          measure_plan(spec, train, config, workers, c.plan, c.micro_batches, warmup, timed);
    };
#ifdef STARPU_SIMGRID
    gpu_only = false;  // a simulated machine has no polling to avoid
#endif
    // MPS lenet b256's sample splits measured 3.5-7.4 ms after the parked cuda candidate against
    // 3.6-4.2 ms run alone (perf/results/h200-2026-12-03-z): a fresh StarPU leaves the contexts.
    if (!(gpu_only && workers.cpu > 1) && holds_parking_contexts() && options.restart_runtime)
      options.restart_runtime();
    try {
      if (gpu_only && workers.cpu > 1)
        run_with_cpu_workers_parked(1, time_it);
      else
        time_it();
    } catch (const std::exception &e) {
      c.failure = e.what();
      c.measured_ms = INFINITY;
    }
  };
  const auto run = [&](const std::string &plan, double predicted_ms, long micro_batches = 0,
                       bool gpu_only = false) {
    PlanCandidate c;
    c.plan = plan;
    c.micro_batches = micro_batches;
    c.predicted_ms = predicted_ms;
    // Progress: a search takes seconds (minutes for wide's CPU candidate).
    std::fprintf(stderr, "auto plan: measuring %s\n", candidate_name(c).c_str());
    measure(c, gpu_only, options.warmup_steps, options.timed_steps);
    search.candidates.push_back(c);
    gpu_only_of.push_back(gpu_only);
    return c.measured_ms;
  };
  // With several GPUs the single device is cuda0: `cuda` would let the scheduler move whole ops
  // between GPUs (lenet b64 on 2 simulated H200s: 4.8 ms against 1.1 on one; on 4, StarPU's
  // simulation stalls). Then the GPUs together: the batch cut over them, and every conv's filters.
  double gpu_ms = run(workers.cuda > 1 ? "cuda0" : "cuda", -1, 0, true);
  const size_t batch = config.local_batch();
  if (workers.cuda > 1) {
    if (batch >= size_t(workers.cuda))
      gpu_ms = std::min(gpu_ms, run("cuda", -1, workers.cuda, true));
    gpu_ms = std::min(gpu_ms, run(filters_across_gpus(spec, workers.cuda), -1, 0, true));
  }
  const double cpu_ms = workers.cpu > 0 ? run("cpu", -1) : INFINITY;

  // Co-execution can only pay while the CPU alone is not hopelessly slower; past that, neither
  // split is tried (and the filter chooser's calibration, long on wide layers, is not paid).
  const auto fastest = [&] {
    refine(search, gpu_only_of, measure, options);
    const auto best = std::min_element(search.candidates.begin(), search.candidates.end(),
                                       [](const PlanCandidate &a, const PlanCandidate &b) {
                                         return a.measured_ms < b.measured_ms;
                                       });
    if (!std::isfinite(best->measured_ms))
      throw std::runtime_error("auto plan: no candidate could run (" + best->plan + ": " +
                               best->failure + ")");
    search.plan = best->plan;
    search.micro_batches = best->micro_batches;
    search.seconds = elapsed();
    return search;
  };
  if (!(std::isfinite(cpu_ms) && std::isfinite(gpu_ms) &&
        cpu_ms <= options.max_cpu_slowdown * gpu_ms && batch >= 2))
    return fastest();
  AutoPlanOptions chooser;
  chooser.max_candidates = options.filter_candidates;
  search.filters =
      resolve_auto_plans(spec, parse_network_plan("auto"), workers, int(config.batch), chooser);
  bool gives_cpu_filters = false;
  for (const AutoChoice &c : search.filters->choices)
    gives_cpu_filters = gives_cpu_filters || cpu_filters(c.plan) > 0;
  if (gives_cpu_filters)
    run("cuda;" + search.filters->text,
        std::isnan(search.filters->predicted_us) ? -1 : search.filters->predicted_us / 1000.0);

  // Sample splits around the share that would end both sides together, then nearer the fastest;
  // each share moved to the nearest that cuts into even chains, and measured once.
  std::vector<size_t> shares;
  std::vector<double> share_ms;
  const auto snap = [&](size_t wanted) {
    return even_chain_share(wanted, batch, workers.cpu, config.cpu_chain_samples);
  };
  const auto predicted_ms = [&](size_t k) {  // each side's time for its share of the batch
    const double b = double(batch);
    return std::max(gpu_ms * double(batch - k) / b, cpu_ms * double(k) / b);
  };
  const auto run_share = [&](size_t wanted) {
    const size_t k = snap(wanted);
    const auto seen = std::find(shares.begin(), shares.end(), k);
    if (seen != shares.end()) return share_ms[size_t(seen - shares.begin())];
    const double ms = run("samples:" + std::to_string(k), predicted_ms(k));
    shares.push_back(k);
    share_ms.push_back(ms);
    return ms;
  };
  for (size_t k : first_sample_shares(batch, gpu_ms, cpu_ms)) run_share(k);
  // next_sample_shares reads three shares in increasing order (the snapping keeps the order).
  for (size_t k : next_sample_shares(shares, share_ms, batch)) run_share(k);
#ifndef STARPU_SIMGRID  // a simulated machine's CPU workers all run alike
  // The fastest share again, and one an eighth larger, with chains that claim blocks of each
  // other's samples: equal pinned chains wait for the slowest CPU worker, 1.3-2.4x slower than
  // the fastest in H100 and H200 traces of sample splits (chain_claims.h).
  const size_t best =
      shares[size_t(std::min_element(share_ms.begin(), share_ms.end()) - share_ms.begin())];
  const size_t block = claim_block_samples(config.cpu_chain_samples);
  std::vector<size_t> claimed;
  for (size_t wanted : {best, best + best / 8}) {
    const size_t k = snap(std::min(wanted, batch - 1));
    if (std::find(claimed.begin(), claimed.end(), k) != claimed.end()) continue;
    claimed.push_back(k);
    run("samples:" + std::to_string(k) + "x" + std::to_string(block), predicted_ms(k));
  }
#endif
  return fastest();
}

std::vector<size_t> first_sample_shares(size_t batch, double gpu_ms, double cpu_ms) {
  const double ideal = double(batch) * gpu_ms / (gpu_ms + cpu_ms);
  std::vector<size_t> shares;
  for (double f : {0.6, 1.0, 1.4}) {
    const size_t k = std::clamp<size_t>(size_t(std::lround(ideal * f)), 1, batch - 1);
    if (std::find(shares.begin(), shares.end(), k) == shares.end()) shares.push_back(k);
  }
  return shares;
}

std::vector<size_t> next_sample_shares(const std::vector<size_t> &shares,
                                       const std::vector<double> &measured_ms, size_t batch) {
  // The split's own costs (the gradients' sum and exchange, the chains' start) move the balance
  // away from the single devices' times: MPS lenet b256 on an H100 measured shares 69 / 115 /
  // 162 in the search, and 96 was the fastest of a sweep (perf/results/h100-2026-12-06-a).
  std::vector<size_t> next;
  if (shares.size() != 3 || measured_ms.size() != 3 || batch < 2) return next;
  const size_t best =
      size_t(std::min_element(measured_ms.begin(), measured_ms.end()) - measured_ms.begin());
  if (!std::isfinite(measured_ms[best])) return next;
  const long k = long(shares[best]), middle = long(shares[1]);
  const long lower = best > 0 ? long(shares[best - 1]) : 2 * k - middle;
  const long upper = best < 2 ? long(shares[best + 1]) : 2 * k - middle;
  for (long other : {lower, upper}) {
    const size_t half = size_t(std::clamp<long>((k + other) / 2, 1, long(batch) - 1));
    if (std::find(shares.begin(), shares.end(), half) == shares.end() &&
        std::find(next.begin(), next.end(), half) == next.end())
      next.push_back(half);
  }
  return next;
}

long chosen_micro_batches(const PlanSearch &search, long requested) {
  return requested > 0 ? requested : search.micro_batches;
}

std::vector<std::string> describe(const PlanSearch &search) {
  std::vector<std::string> lines;
  if (search.candidates.empty()) return {"auto plan: " + search.plan + " (no CUDA worker)"};
  char line[1024];
  std::snprintf(line, sizeof(line), "auto plan: %zu candidates measured in %.1f s",
                search.candidates.size(), search.seconds);
  lines.push_back(line);
  for (const PlanCandidate &c : search.candidates) {
    std::string predicted =
        c.predicted_ms < 0 ? ""
                           : ", predicted " + std::to_string(c.predicted_ms).substr(0, 6) + " ms";
    const std::string first =
        c.first_ms > 0
            ? " (first " + std::to_string(c.first_ms).substr(0, 6) + ", over fewer steps)"
            : "";
    const std::string name = candidate_name(c);
    const bool chosen = c.plan == search.plan && c.micro_batches == search.micro_batches;
    if (!c.failure.empty())
      std::snprintf(line, sizeof(line), "  %s: failed: %s", name.c_str(), c.failure.c_str());
    else
      std::snprintf(line, sizeof(line), "  %s: measured %.3f ms/step%s%s%s", name.c_str(),
                    c.measured_ms, first.c_str(), predicted.c_str(), chosen ? "  <- chosen" : "");
    lines.push_back(line);
  }
  return lines;
}

}  // namespace starcnn
