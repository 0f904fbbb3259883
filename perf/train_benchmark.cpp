// Training step time of starcnn's networks on random CIFAR-like data, in four configurations:
//   cpu-only  StarPU started with STARPU_NCUDA=0; plan `cpu` (every op on the CPU workers, one
//             micro-batch per worker)
//   gpu-only  StarPU started with STARPU_NCPU=1 (the data-loading task has only a CPU
//             implementation, so one CPU worker stays); plan `cuda` (every op on CUDA)
//   all-cuda  StarPU with every worker it finds, plan `cuda`: the GPU alone however many CPU
//             workers there are, every CPU worker but one parked (asleep; it should match
//             gpu-only)
//   all-cuda-polling  all-cuda with every CPU worker left awake (polling), to measure what parking
//             saves
//   cpu+gpu   StarPU with every worker it finds, --plan (default auto: the measured search of
//             model/train/plan_search.h, whose candidates are reported too; when its choice
//             leaves the CPU workers idle, StarPU restarts with one, as in train)
// StarPU is started afresh for each measurement (environment set before starpu_init), so one run
// measures every configuration. Steps are timed as perf/train_timing_support.h says (the same
// procedure simulate runs under SimGrid): warm-up rounds (which also calibrate the history perf
// models dmda needs, and count the tasks each kind of worker runs), then rounds of --round steps,
// step_ms the median over rounds. --max-seconds caps both the warm-up and the timing of one
// measurement. One JSON line per measurement on stdout, a table on stderr.
#include "apps/cli/args.h"
#include "apps/cli/blas_core.h"
#include "apps/cli/cpu_chains_option.h"
#include "apps/cli/cuda_chain_option.h"
#ifdef STARCNN_USE_CUDA
#include "codelets/support/cuda_graph_cache.h"
#endif
#include "apps/cli/math_option.h"
#include "codelets/support/codelet_runtime.h"
#include "codelets/support/codelet_support.h"
#include "model/data/dataset.h"
#include "model/io/json.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/runtime/parked_workers.h"
#include "model/runtime/runtime.h"
#include "model/train/plan_calibration.h"
#include "model/train/plan_search.h"
#include "model/train/trainer.h"
#include "perf/bench_support.h"
#include "perf/train_timing_support.h"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace starcnn {
namespace {

const std::vector<std::string> kConfigs = {"cpu-only", "gpu-only", "all-cuda", "all-cuda-polling",
                                           "cpu+gpu"};

struct Options {
  std::string networks = "lenet,wide", batches = "64,256",
              configs = "cpu-only,gpu-only,all-cuda,cpu+gpu";
  std::string plan = "auto", sched, math = kDefaultProgramMath, cpu_chains = "auto", fusion = "on",
              cuda_chain = "graph";
  long repeats = 1;
  TimingOptions timing;
};

std::vector<std::string> split_list(const std::string &text, const char *option) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  if (items.empty()) throw UsageError(std::string("--") + option + " lists nothing");
  return items;
}

std::vector<long> parse_batches(const std::string &text) {
  std::vector<long> batches;
  for (const std::string &item : split_list(text, "batches")) {
    size_t used = 0;
    long value = 0;
    try {
      value = std::stol(item, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != item.size() || value < 1 || value > (1 << 16))
      throw UsageError("--batches: '" + item + "' is not a batch size from 1 to 65536");
    batches.push_back(value);
  }
  return batches;
}

std::vector<std::string> parse_configs(const std::string &text) {
  std::vector<std::string> configs = split_list(text, "configs");
  for (const std::string &c : configs)
    if (std::find(kConfigs.begin(), kConfigs.end(), c) == kConfigs.end())
      throw UsageError("--configs: unknown configuration '" + c +
                       "' (use cpu-only, gpu-only, all-cuda, all-cuda-polling, cpu+gpu)");
  return configs;
}

// The environment variables StarPU reads at start-up, as the user gave them.
struct StarpuEnv {
  std::optional<std::string> ncpu, ncuda, sched;
  static std::optional<std::string> get(const char *name) {
    const char *v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  static void put(const char *name, const std::optional<std::string> &value) {
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  // Sets STARPU_NCPU / STARPU_NCUDA for a configuration; the user's values stay otherwise. The
  // scheduler, unless given: lws for cpu-only, as train runs without CUDA workers (StarPU's
  // default; under dmda its chains' tasks waited on the first few workers: lenet b64 4.17 ms
  // against 3.18, call r), else dmda.
  void apply(const std::string &config) const {
    put("STARPU_NCPU", config == "gpu-only" ? std::optional<std::string>("1") : ncpu);
    put("STARPU_NCUDA", config == "cpu-only" ? std::optional<std::string>("0") : ncuda);
    put("STARPU_SCHED", sched ? sched : std::string(config == "cpu-only" ? "lws" : "dmda"));
  }
};

struct Machine {
  std::string cpu, gpu, loadavg;
  unsigned cores = 0;
  int cuda_workers = 0;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string name = line.substr(line.find(':') + 1);
      name.erase(0, name.find_first_not_of(' '));
      return name;
    }
  return "unknown";
}

// Starts StarPU once as the user's environment has it, to see which CUDA devices there are.
Machine probe_machine() {
  Machine m;
  m.cpu = cpu_model();
  m.cores = std::thread::hardware_concurrency();
  std::ifstream("/proc/loadavg") >> m.loadavg;  // the 1-minute load: other work shares the cores
  Runtime runtime;
  m.cuda_workers = runtime.workers().cuda;
  int ids[STARPU_NMAXWORKERS];
  const unsigned n = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, STARPU_NMAXWORKERS);
  for (unsigned i = 0; i < n; ++i) {
    char name[128];
    starpu_worker_get_name(ids[i], name, sizeof(name));
    m.gpu += (i ? "; " : "") + std::string(name);
  }
  return m;
}

struct Result {
  std::string scheduler, workers;
  MachineWorkers counts;
  TrainTiming timing;
  std::optional<PlanSearch> search;  // --plan auto
  MachineWorkers search_workers;     // the workers the search ran on
  int parked_cpu_workers = 0;        // asleep while the plan was timed
};

Result measure(const Options &o, const NetworkSpec &spec, const Dataset &data, size_t batch,
               const std::string &config) {
  std::optional<Runtime> runtime;
  runtime.emplace();
  Result r;
  std::string plan = config == "cpu-only" ? "cpu" : config == "cpu+gpu" ? o.plan : "cuda";
  TimingOptions timing = o.timing;
  if (is_measured_auto(parse_network_plan(plan))) {
    r.search_workers = runtime->workers();
    r.search = search_plan_for_timing(spec, data, batch, r.search_workers, timing, [&] {
      runtime.reset();
      runtime.emplace();
    });
    plan = r.search->plan;
    // As train does: a fresh StarPU, with one CPU worker for a plan that leaves them idle.
    restart_for_plan(runtime, RuntimeOptions{}, spec, plan, !r.search->candidates.empty());
  }
  r.scheduler = runtime->scheduler();
  r.workers = runtime->describe_workers();
  r.counts = runtime->workers();
  // all-cuda keeps every CPU worker, parked (asleep) while the plan leaves them idle.
  const int awake = config == "all-cuda" ? cpu_workers_for_plan(spec, plan, r.counts) : -1;
  const auto time_it = [&] {
    r.parked_cpu_workers = parked_cpu_workers();
    r.timing = time_training(spec, data, batch, plan, r.counts, timing);
  };
  if (awake > 0)
    run_with_cpu_workers_parked(awake, time_it);
  else
    time_it();
  return r;
}

json::Object common_fields(const std::string &network, size_t batch, const std::string &config,
                           const std::string &math, const Machine &m) {
  json::Object machine;
  machine.string("cpu", m.cpu).integer("cores", m.cores);
  if (m.gpu.empty())
    machine.null("gpu");
  else
    machine.string("gpu", m.gpu);
  if (m.loadavg.empty())
    machine.null("loadavg");
  else
    machine.number("loadavg", std::strtod(m.loadavg.c_str(), nullptr));
  return json::Object()
      .string("engine", "starcnn")
      .string("network", network)
      .integer("batch", batch)
      .string("config", config)
      .string("math", math)
      .object("machine", machine)
      .object("openblas",
              json::Object()
                  .string_or_null("OPENBLAS_CORETYPE", std::getenv("OPENBLAS_CORETYPE"))
                  .string_or_null("OPENBLAS_L2_SIZE", std::getenv("OPENBLAS_L2_SIZE"))
                  .string_or_null("OPENBLAS_NUM_THREADS", std::getenv("OPENBLAS_NUM_THREADS"))
                  .string("core", blas_kernel_name()));
}

void print_line(const json::Object &line) {
  std::printf("%s\n", line.text().c_str());
  std::fflush(stdout);
}

void print_result(json::Object line, size_t batch, const Result &res) {
  const TrainTiming &r = res.timing;
  line.string("plan", r.plan)
      .string("scheduler", res.scheduler)
      .string("workers", res.workers)
      .integer("cpu_workers", res.counts.cpu)
      .integer("cuda_workers", res.counts.cuda)
      .integer("parked_cpu_workers", res.parked_cpu_workers)
      .integer("micro_batches", r.micro_batches)
      .fixed("step_ms", r.step_ms, 4)
      .fixed("step_ms_mean", r.mean_ms, 4)
      .fixed("step_ms_min", r.min_ms, 4)
      .fixed("images_per_s", double(batch) * 1000.0 / r.step_ms, 1)
      .integer("tasks_per_step", r.tasks_per_step)
      .fixed("cpu_tasks_per_step", r.cpu_tasks_per_step, 1)
      .fixed("cuda_tasks_per_step", r.cuda_tasks_per_step, 1)
      .integer("warmup_steps", r.warmup_steps)
      .integer("steps", r.timed_steps)
      .integer("round", r.timed_steps / std::max<size_t>(r.rounds, 1));
  // Negative: no auto plan; NaN (written as null): the perf models had no prediction.
  if (res.search && !res.search->candidates.empty()) {
    line.array("auto_candidates", candidates_json(*res.search))  // --plan auto's search
        .integer("search_cpu_workers", res.search_workers.cpu)
        .integer("search_cuda_workers", res.search_workers.cuda);
  }
  print_line(line);
}

int run(const Options &o) {
  const std::vector<std::string> networks = split_list(o.networks, "networks");
  const std::vector<long> batches = parse_batches(o.batches);
  const std::vector<std::string> configs = parse_configs(o.configs);
  std::vector<NetworkSpec> specs;
  for (const std::string &name : networks) {
    NetworkSpec spec = load_network(name);
    if (spec.input.c != 3) spec = with_input_channels(spec, 3);
    if (spec.input.h != 32 || spec.input.w != 32)
      throw std::invalid_argument(name + " takes " + std::to_string(spec.input.h) + "x" +
                                  std::to_string(spec.input.w) +
                                  " inputs; this benchmark feeds 3x32x32");
    specs.push_back(spec);
  }
  // Checks the plan's syntax before any long measurement (the machine check comes later).
  const NetworkPlanText plans = parse_network_plan(o.plan);
  for (const NetworkSpec &spec : specs)
    for (const LayerSpec &layer : spec.layers)
      if (layer.kind == LayerKind::conv && plans.plan_for(layer.name) != "auto")
        parse_split_plan(plans.plan_for(layer.name), layer.out, MachineWorkers{1, 1});
  const bool fold_update = update_fold_asked();  // STARCNN_FOLD_UPDATE, refused before any run
  if (!o.sched.empty()) setenv("STARPU_SCHED", o.sched.c_str(), 1);
  setenv("STARPU_SILENT", "1", 0);  // perf-model calibration notes would drown the table

  const StarpuEnv env{StarpuEnv::get("STARPU_NCPU"), StarpuEnv::get("STARPU_NCUDA"),
                      StarpuEnv::get("STARPU_SCHED")};
  const Machine machine = probe_machine();
  std::fprintf(stderr, "machine: %s, %u cores (load %s)%s%s; STARPU_SCHED=%s; math %s\n",
               machine.cpu.c_str(), machine.cores, machine.loadavg.c_str(),
               machine.gpu.empty() ? "" : ", ", machine.gpu.c_str(),
               env.sched ? env.sched->c_str() : "lws for cpu-only, dmda otherwise", o.math.c_str());
  std::fprintf(stderr, "%-8s %6s %-9s %10s %10s %7s %9s  %s\n", "network", "batch", "config",
               "step_ms", "images/s", "tasks", "cpu/cuda", "plan");
  for (size_t i = 0; i < specs.size(); ++i) {
    for (long b : batches) {
      const size_t batch = size_t(b);
      const Dataset data =
          random_dataset(specs[i], batch * size_t(o.timing.round), uint64_t(o.timing.seed));
      // Repeats cycle through the configurations, so that a slow spell of a shared host falls
      // on all of them alike and their ratios can be taken repeat by repeat.
      for (long repeat = 0; repeat < o.repeats; ++repeat)
        for (const std::string &config : configs) {
          json::Object common = common_fields(networks[i], batch, config, o.math, machine);
          common.string("cpu_chains", o.cpu_chains)
              .string("fusion", o.fusion)
              .string("cuda_chain", o.cuda_chain)
              .boolean("fold_update", fold_update);
          if (o.repeats > 1) common.integer("repeat", repeat);
          if (config != "cpu-only" && machine.cuda_workers == 0) {
            if (repeat == 0) {
              print_line(json::Object(common).string("skipped", "StarPU found no CUDA worker"));
              std::fprintf(stderr, "%-8s %6zu %-9s skipped: no CUDA worker\n", networks[i].c_str(),
                           batch, config.c_str());
            }
            continue;
          }
          env.apply(config);
#ifdef STARCNN_USE_CUDA
          const uint64_t replays = cuda_graph_replays();
#endif
          const Result res = measure(o, specs[i], data, batch, config);
#ifdef STARCNN_USE_CUDA
          // Whether the CUDA chains ran as graphs (warm-up and search included).
          common.integer("cuda_graph_replays", int64_t(cuda_graph_replays() - replays));
#endif
          print_result(common, batch, res);
          const TrainTiming &r = res.timing;
          std::fprintf(stderr, "%-8s %6zu %-9s %10.3f %10.1f %7llu %4.0f/%-4.0f  %s\n",
                       networks[i].c_str(), batch, config.c_str(), r.step_ms,
                       double(batch) * 1000.0 / r.step_ms, (unsigned long long)r.tasks_per_step,
                       r.cpu_tasks_per_step, r.cuda_tasks_per_step, r.plan.c_str());
        }
    }
  }
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  Options o;
  fix_blas_core("train_benchmark", argv);
  return run_program("train_benchmark", [&] {
    ArgParser args(
        "train_benchmark",
        "Times starcnn training steps (median over rounds after warm-up) on random 3x32x32 data\n"
        "in the configurations cpu-only (STARPU_NCUDA=0, plan cpu), gpu-only (STARPU_NCPU=1 for\n"
        "the data-loading task, plan cuda), all-cuda (every worker, plan cuda, the idle CPU\n"
        "workers parked), all-cuda-polling (the same, left polling) and cpu+gpu (every worker,\n"
        "--plan, default auto). One JSON line per measurement on stdout, a table on stderr.\n"
        "STARPU_SILENT defaults to 1 here (set STARPU_SILENT=0 to see StarPU's notes).\n"
        "Configurations needing CUDA are reported as skipped without a CUDA worker.");
    args.add("networks", "LIST", "comma-separated networks: lenet, wide or .net files",
             &o.networks);
    args.add("batches", "LIST", "comma-separated batch sizes", &o.batches);
    args.add("configs", "LIST",
             "comma-separated: cpu-only, gpu-only, all-cuda, all-cuda-polling, cpu+gpu",
             &o.configs);
    args.add("repeats", "N",
             "measure every configuration N times, cycling through them (each line gets its "
             "\"repeat\")",
             &o.repeats, 1, 1000);
    args.add("plan", "PLAN",
             "plan of the cpu+gpu configuration (see train --help; default auto, the measured "
             "search)",
             &o.plan);
    args.add("sched", "NAME",
             "StarPU scheduler (default: $STARPU_SCHED, else lws for cpu-only, as train runs "
             "without CUDA workers, and dmda for the others)",
             &o.sched);
    args.add("warmup", "N",
             "untimed steps first (whole rounds, at least one; it also counts tasks per worker "
             "kind)",
             &o.timing.warmup, 1, 100000);
    args.add("steps", "N", "timed steps, rounded up to whole rounds", &o.timing.steps, 1, 1000000);
    args.add("round", "N", "steps per timed round (the host waits at the end of each)",
             &o.timing.round, 1, 10000);
    args.add("max-seconds", "S",
             "end the warm-up, and the timing, after the round that passes S seconds",
             &o.timing.max_seconds, 0.0, 1e6);
    args.add("lr", "F", "SGD learning rate (momentum 0.9)", &o.timing.lr, 0.0, 10.0);
    args.add("seed", "N", "seed of the weights and the random data", &o.timing.seed, 0, 1L << 40);
    args.add("micro-batches", "N",
             "micro-batches per step, as train's (0: one per CPU worker without CUDA workers, "
             "else 1)",
             &o.timing.micro_batches, 0, 1 << 20);
    add_cpu_chains_option(args, &o.cpu_chains);
    add_cuda_chain_option(args, &o.cuda_chain);
    args.add_choice("fusion", {"on", "off"},
                    "a whole convolution's ReLU and maxpool in its own tasks (one task each way, "
                    "as train runs it) or as tasks of their own (to compare)",
                    &o.fusion);
    add_math_option(args, &o.math);
    if (!args.parse(argc, argv)) return 0;
    apply_math_option(o.math);
    o.timing.pin_cpu_chains = parse_cpu_chains(o.cpu_chains);
    o.timing.fuse_layers = o.fusion == "on";
    o.timing.cuda_chain = parse_cuda_chain(o.cuda_chain);
    return run(o);
  });
}
