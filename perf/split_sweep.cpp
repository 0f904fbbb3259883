// The split sweep: measured training step time along one split axis, and of whole-network plans
// (auto, none, any given), so that `auto` can be judged against the best swept split:
//   --axis filters  every split of one convolution (k of its C filters on the CPU workers, cut by
//                   samples into one task per CPU worker, the rest on CUDA, k = 0..C), the other
//                   layers on a base plan; each line carries the filter chooser's predicted conv
//                   time (StarPU's perf models, calibrated first for the swept layer's candidates)
//   --axis samples  the sample split samples:K for K = 0 (the GPU alone) .. batch (the CPU alone);
//                   each line carries the prediction from the two ends, max(T_gpu (B-K)/B,
//                   T_cpu K/B), which ignores the gradient sums' cost
// perf/plot_sweep.py draws the JSON lines: step time against the CPU share, auto's pick marked.
//
// One StarPU for the whole run; each plan gets its own parameters and trainer on random
// 3x32x32 data, warm-up rounds, then timed rounds of --round steps (the host waits at the end of
// a round); step_ms is the median of round time / steps. One JSON line per plan on stdout, a table
// and a verdict on stderr.
//
// Without CUDA workers no split exists: the sweep then cuts the layer's CPU share into 1..N tasks
// (N CPU workers) instead, and says so.
#include "apps/cli/args.h"
#include "apps/cli/blas_core.h"
#include "apps/cli/math_option.h"
#include "model/data/dataset.h"
#include "model/io/json.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/runtime/runtime.h"
#include "model/train/chain_samples.h"
#include "model/train/plan_calibration.h"
#include "model/train/plan_search.h"
#include "model/train/trainer.h"
#include "perf/bench_support.h"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace starcnn {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string network = "lenet", layer, base, plans = "auto,none", sched, axis = "filters";
  std::string math = kDefaultProgramMath;
  long batch = 64, steps = 10, warmup = 5, round = 5, stride = 1, seed = 1;
  double max_seconds = 5;
};

std::vector<std::string> split_list(const std::string &text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

const LayerSpec &conv_layer(const NetworkSpec &spec, const std::string &name) {
  for (const LayerSpec &l : spec.layers)
    if (l.kind == LayerKind::conv && (name.empty() || l.name == name)) return l;
  throw UsageError("--layer: " + spec.source + " has no convolution named '" + name + "'");
}

// The base plan: the whole network on CUDA where there is CUDA, else on the CPU workers.
std::string default_base(const MachineWorkers &workers) {
  return workers.cuda > 0 ? "cuda" : "cpu";
}

struct Measured {
  std::string kind, plan, resolved;
  int cpu_share = -1;  // filters or samples on the CPU workers, along the swept axis
  double step_ms = 0, min_ms = 0, predicted_ms = NAN;
  uint64_t tasks_per_step = 0;
  size_t steps = 0;
};

// `base` with `layer` planned `plan` instead.
std::string with_layer_plan(const std::string &base, const std::string &layer,
                            const std::string &plan) {
  const NetworkPlanText plans = parse_network_plan(base);
  std::string text = plans.default_plan;
  for (const auto &[name, p] : plans.overrides)
    if (name != layer) text += ";" + name + "=" + p;
  return text + ";" + layer + "=" + plan;
}

Measured measure(const Options &o, const NetworkSpec &spec, const Dataset &data,
                 const MachineWorkers &workers, const std::string &plan_text) {
  Measured m;
  m.plan = m.resolved = plan_text;
  TrainConfig tc;
  tc.batch = size_t(o.batch);
  tc.lr = 0.01f;
  tc.seed = uint64_t(o.seed);
  tc.log_every = size_t(o.round);
  tc.cpu_chain_samples = min_samples_per_cpu_chain(spec);
  NetworkPlanText plans = parse_network_plan(plan_text);
  if (is_measured_auto(plans)) {  // train's measured auto
    const PlanSearch search = search_plans(spec, data, tc, workers);
    for (const std::string &line : describe(search)) std::fprintf(stderr, "%s\n", line.c_str());
    plans = parse_network_plan(search.plan);
    m.resolved = search.plan;
    for (const PlanCandidate &c : search.candidates)
      if (c.plan == search.plan && c.predicted_ms >= 0) m.predicted_ms = c.predicted_ms;
  } else {
    // Resolves a layer's `auto` where there is one, and predicts the plan's conv time.
    const AutoPlanning planning = resolve_auto_plans(spec, plans, workers, int(o.batch));
    plans = planning.plans;
    m.resolved = planning.text;
    m.predicted_ms = planning.predicted_us / 1000.0;
  }
  apply_plan(plans, workers, 0, tc);
  ParameterSet params(spec, plans, workers);
  params.initialize(uint64_t(o.seed));
  Trainer trainer(spec, params, data, tc);
  const std::atomic<bool> no_stop{false};
  size_t epoch = 0, warm = 0;
  const Clock::time_point start = Clock::now();
  const auto seconds = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  do {
    trainer.train_epoch(epoch++, nullptr, no_stop);
    warm += size_t(o.round);
  } while (warm < size_t(o.warmup) && seconds(start) < o.max_seconds);
  m.tasks_per_step = trainer.tasks_per_step();
  std::vector<double> rounds;
  const Clock::time_point window = Clock::now();
  while (m.steps < size_t(o.steps)) {
    const Clock::time_point t = Clock::now();
    trainer.train_epoch(epoch++, nullptr, no_stop);
    rounds.push_back(1000.0 * seconds(t) / double(o.round));
    m.steps += size_t(o.round);
    if (seconds(window) > o.max_seconds) break;
  }
  m.step_ms = median(rounds);
  m.min_ms = *std::min_element(rounds.begin(), rounds.end());
  return m;
}

void print(const Options &o, const std::string &layer, const std::string &workers_text,
           const Measured &m) {
  const std::string line = json::Object()
                               .string("tool", "split_sweep")
                               .string("network", o.network)
                               .integer("batch", o.batch)
                               .string("layer", layer)
                               .string_or_null("scheduler", std::getenv("STARPU_SCHED"))
                               .string("workers", workers_text)
                               .string("kind", m.kind)
                               .string("axis", o.axis)
                               .string("math", o.math)
                               .string("plan", m.plan)
                               .string("resolved_plan", m.resolved)
                               .integer("cpu_share", m.cpu_share)
                               .fixed("step_ms", m.step_ms, 4)
                               .fixed("step_ms_min", m.min_ms, 4)
                               .fixed("predicted_conv_ms", m.predicted_ms, 6)
                               .integer("tasks_per_step", m.tasks_per_step)
                               .integer("steps", m.steps)
                               .text();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%-6s %10.3f %10.3f %12s %7llu  %s\n", m.kind.c_str(), m.step_ms, m.min_ms,
               std::isnan(m.predicted_ms) ? "-" : std::to_string(m.predicted_ms).c_str(),
               (unsigned long long)m.tasks_per_step, m.resolved.c_str());
}

int run(const Options &o) {
  NetworkSpec spec = load_network(o.network);
  if (spec.input.c != 3) spec = with_input_channels(spec, 3);
  if (spec.input.h != 32 || spec.input.w != 32)
    throw UsageError(o.network + " does not take 3x32x32 inputs");
  const LayerSpec &layer = conv_layer(spec, o.layer);
  if (!o.sched.empty()) setenv("STARPU_SCHED", o.sched.c_str(), 1);
  setenv("STARPU_SCHED", "dmda", 0);
  setenv("STARPU_SILENT", "1", 0);

  Runtime runtime;
  const MachineWorkers workers = runtime.workers();
  const std::string base = o.base.empty() ? default_base(workers) : o.base;
  const bool by_samples = o.axis == "samples";
  const Dataset data = random_dataset(spec, size_t(o.batch * o.round), uint64_t(o.seed));
  std::fprintf(stderr,
               "split_sweep: %s batch %ld, axis %s, layer %s (%d filters), "
               "STARPU_SCHED=%s, %s, math %s\n",
               o.network.c_str(), o.batch, o.axis.c_str(), layer.name.c_str(), layer.out,
               std::getenv("STARPU_SCHED"), runtime.describe_workers().c_str(), o.math.c_str());
  std::fprintf(stderr, "base plan of the other layers: %s\n", base.c_str());
  if (workers.cuda == 0)
    std::fprintf(stderr,
                 "note: no CUDA worker, so no CPU/GPU split exists; sweeping the number of CPU "
                 "tasks of %s instead (a split sweep needs a GPU machine)\n",
                 layer.name.c_str());
  // Calibrates every candidate of the swept layer, so each swept plan has its prediction.
  if (!by_samples)
    resolve_auto_plans(spec, parse_network_plan(with_layer_plan(base, layer.name, "auto")), workers,
                       int(o.batch));
  std::fprintf(stderr, "%-6s %10s %10s %12s %7s  %s\n", "kind", "step_ms", "min_ms", "predicted_ms",
               "tasks", "plan");

  std::vector<Measured> swept;
  std::vector<std::pair<int, std::string>> sweep;  // CPU share, the (layer's) plan
  if (by_samples && workers.cuda > 0) {
    for (long k = 0; k <= o.batch; k += o.stride) {
      sweep.emplace_back(int(k), k == 0         ? "cuda"
                                 : k == o.batch ? "cpu"
                                                : "samples:" + std::to_string(k));
      if (k < o.batch && k + o.stride > o.batch) k = o.batch - o.stride;
    }
  } else if (workers.cuda > 0) {
    for (int k = 0; k <= layer.out; k += int(o.stride)) {
      const SplitPlan plan = parse_split_plan(
          k == 0 ? std::to_string(layer.out) + "@cuda" : "cpu:" + std::to_string(k), layer.out,
          workers);
      sweep.emplace_back(k, plan.describe());
      if (k < layer.out && k + int(o.stride) > layer.out) k = layer.out - int(o.stride);
    }
  } else {
    for (int t = 1; t <= std::min(workers.cpu, layer.out); ++t)
      sweep.emplace_back(layer.out, std::to_string(layer.out) + "@cpu/" + std::to_string(t));
  }
  const std::string workers_text = runtime.describe_workers();
  // Along the samples axis the prediction comes from the two ends, measured first.
  double gpu_ms = NAN, cpu_ms = NAN;
  if (by_samples && sweep.size() > 1) {
    std::rotate(sweep.begin() + 1, sweep.end() - 1, sweep.end());
    for (size_t i = 0; i < 2; ++i) {
      Measured m = measure(o, spec, data, workers, sweep[i].second);
      (i == 0 ? gpu_ms : cpu_ms) = m.step_ms;
    }
  }
  for (const auto &[k, layer_plan] : sweep) {
    Measured m = measure(o, spec, data, workers,
                         by_samples ? layer_plan : with_layer_plan(base, layer.name, layer_plan));
    m.kind = "sweep";
    m.cpu_share = k;
    if (by_samples) {
      const double b = double(o.batch);
      m.predicted_ms = std::max(gpu_ms * (b - k) / b, cpu_ms * k / b);
    }
    print(o, layer.name, workers_text, m);
    swept.push_back(m);
  }
  std::vector<Measured> given;
  for (const std::string &plan : split_list(o.plans)) {
    Measured m = measure(o, spec, data, workers, plan);
    m.kind = "plan";
    print(o, layer.name, workers_text, m);
    given.push_back(m);
  }
  const auto best = std::min_element(swept.begin(), swept.end(),
                                     [](auto &a, auto &b) { return a.step_ms < b.step_ms; });
  if (best != swept.end()) {
    std::fprintf(stderr, "best swept: %.3f ms  %s\n", best->step_ms, best->resolved.c_str());
    for (const Measured &m : given)
      std::fprintf(stderr, "%s: %.3f ms, %.2fx the best swept  %s\n", m.plan.c_str(), m.step_ms,
                   m.step_ms / best->step_ms, m.resolved.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  Options o;
  fix_blas_core("split_sweep", argv);
  return run_program("split_sweep", [&] {
    ArgParser args(
        "split_sweep",
        "Measures the training step time of every CPU/CUDA split along one axis (--axis filters:\n"
        "one convolution's filters, the other layers on a base plan; --axis samples: the\n"
        "samples of each step through the whole network) and of whole-network plans such as\n"
        "auto, on random 3x32x32 data, with a prediction for each. One JSON line per plan on\n"
        "stdout, a table on stderr; perf/plot_sweep.py draws them. Without CUDA workers it\n"
        "sweeps the layer's CPU task count instead.");
    args.add("network", "NAME|FILE", "lenet, wide or a network description file", &o.network);
    args.add("batch", "N", "samples per step", &o.batch, 1, 1 << 16);
    args.add_alias("batch-size", "batch");
    args.add("layer", "NAME", "the convolution to sweep (default: the first)", &o.layer);
    args.add_choice("axis", {"filters", "samples"},
                    "sweep one conv's filters between CPU and CUDA, or the whole network's samples",
                    &o.axis);
    args.add("base", "PLAN", "plan of the other layers (default: cuda, the whole network on CUDA)",
             &o.base);
    args.add("plans", "LIST", "comma-separated network plans measured after the sweep", &o.plans);
    args.add("stride", "K", "sweep every K-th CPU share (the last share C is always in)", &o.stride,
             1, 1 << 16);
    args.add("sched", "NAME", "StarPU scheduler (default: $STARPU_SCHED, else dmda)", &o.sched);
    args.add("warmup", "N", "untimed steps per plan (whole rounds)", &o.warmup, 1, 100000);
    args.add("steps", "N", "timed steps per plan (whole rounds)", &o.steps, 1, 1000000);
    args.add("round", "N", "steps per round", &o.round, 1, 10000);
    args.add("max-seconds", "S", "cap on the warm-up and on the timing of one plan", &o.max_seconds,
             0.0, 1e6);
    args.add("seed", "N", "seed of the weights and the random data", &o.seed, 0, 1L << 40);
    add_math_option(args, &o.math);
    if (!args.parse(argc, argv)) return 0;
    apply_math_option(o.math);
    return run(o);
  });
}
