// Predicts the training step time of a network on a machine we do not have, with StarPU's SimGrid
// mode (`make simulate` builds this against StarPU with SimGrid, in build-sim/). The steps are
// train_benchmark's (perf/train_timing_support.h, the same Trainer task flow), but no task runs:
// each takes the time that the perf models of a real machine (--models, a STARPU_HOME calibrated
// there) give for its shape and kind of worker, each copy the time of that machine's bus, and the
// scheduler decides as it would there. The machine: --gpus GPUs, each as the calibrated GPU 0 (its
// perf models and links to RAM), and --cpus CPU workers. The bus files are derived into a
// temporary STARPU_HOME (perf/simulated_machine_support.h); --models is only read. One JSON line
// on stdout, a short table on stderr.
#include "apps/cli/args.h"
#include "apps/cli/cpu_chains_option.h"
#include "apps/cli/cuda_chain_option.h"
#include "apps/cli/math_option.h"
#include "codelets/accumulate.h"
#include "codelets/support/simulated_models.h"
#include "model/io/json.h"
#include "model/nn/network_spec.h"
#include "model/runtime/runtime.h"
#include "model/train/plan_search.h"
#include "perf/bench_support.h"
#include "perf/simulated_machine_support.h"
#include "perf/task_overhead_support.h"
#include "perf/train_timing_support.h"

#include <starpu.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

// Under SimGrid, starpu.h renames main to starpu_main so that StarPU's own main starts SimGrid,
// reading the platform from STARPU_HOME, before the program runs. simulate writes that
// STARPU_HOME first: it keeps its main, and starpu_init starts SimGrid.
#undef main

namespace starcnn {
namespace {

struct Options {
  std::string models, host, network = "lenet", plan = "cuda", sched, keep_home, overheads;
  std::string cpu_task_cost = "handoff", cpu_chains = "auto", fusion = "on", cuda_chain = "graph";
  std::string math = kDefaultProgramMath;
  long gpus = 1, cpus = 0, batch = 64;
  bool estimate = false, no_overheads = false, free_reductions = false, chains_at_mean = false;
  TimingOptions timing;
};

// StarPU's cost per task measured on the calibrated machine: task_overhead's JSON line.
struct Overheads {
  std::string file;     // empty: none charged
  std::string cpu_key;  // the measurement a CPU task is charged
  TaskOverheads costs;
};

// --overheads FILE, else MODELS/task_overhead.json where it exists, else none.
Overheads read_overheads(const Options &o) {
  Overheads result;
  if (o.no_overheads) return result;
  std::string path = o.overheads;
  if (path.empty()) {
    path = (std::filesystem::path(o.models) / "task_overhead.json").string();
    if (!std::filesystem::exists(path)) return result;
  }
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line))
    throw UsageError("--overheads: cannot read " + path + " (task_overhead's JSON line)");
  if (o.cpu_task_cost != "handoff" && o.cpu_task_cost != "chain")
    throw UsageError("--cpu-task-cost: '" + o.cpu_task_cost + "' is neither handoff nor chain");
  try {
    result.costs = parse_task_overheads(
        line, o.cpu_task_cost == "chain" ? CpuTaskCost::chain : CpuTaskCost::handoff,
        &result.cpu_key);
  } catch (const std::exception &e) {
    throw UsageError("--overheads: " + path + " is not task_overhead's JSON line (" + e.what() +
                     ")");
  }
  result.file = path;
  return result;
}

// The CPU cores of the calibrated machine (HOST.config), or 0 when it does not say.
long calibrated_cores(const std::string &home, const std::string &host) {
  std::ifstream in(std::filesystem::path(home) / ".starpu/sampling/bus" / (host + ".config"));
  std::string line;
  while (std::getline(in, line))
    if (line.find("Number of CPUs") != std::string::npos) return std::atol(line.c_str());
  return 0;
}

// A new, empty directory for the simulated machine's STARPU_HOME.
std::string make_home(const Options &o) {
  if (!o.keep_home.empty()) {
    if (std::filesystem::exists(o.keep_home))
      throw UsageError("--keep-home " + o.keep_home + " exists: give a new directory");
    std::filesystem::create_directories(o.keep_home);
    return o.keep_home;
  }
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/starcnn-simulate.XXXXXX";
  if (!mkdtemp(dir.data()))
    throw std::runtime_error("cannot make a temporary directory under " + dir);
  return dir;
}

int run(Options o) {
#ifndef STARPU_SIMGRID
  throw std::runtime_error(
      "this simulate was built against a StarPU without SimGrid: build it with `make simulate` "
      "and run build-sim/perf/simulate");
#endif
  if (o.models.empty()) throw UsageError("--models DIR is required (a calibrated STARPU_HOME)");
  NetworkSpec spec = usage_errors_of("--network", [&] { return load_network(o.network); });
  if (spec.input.c != 3) spec = with_input_channels(spec, 3);  // train_benchmark's 3x32x32 data
  const std::string host =
      usage_errors_of("--models", [&] { return calibrated_host(o.models, o.host); });
  const Overheads overheads = read_overheads(o);
  if (o.cpus == 0) o.cpus = std::max(1L, calibrated_cores(o.models, host) - o.gpus);
  SimulatedMachine machine;
  machine.gpus = int(o.gpus);
  machine.cpus = int(o.cpus + o.gpus);  // StarPU gives each CUDA worker a core of its own
  const std::string home = make_home(o);
  // The temporary STARPU_HOME goes however the run ends (--keep-home's stays).
  struct RemoveHome {
    std::string dir;
    ~RemoveHome() {
      std::error_code ignored;
      if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
    }
  } remove_home{o.keep_home.empty() ? home : ""};
  usage_errors_of("--models", [&] {
    write_simulated_home(o.models, host, machine, home);
    return 0;
  });

  setenv("STARPU_HOME", home.c_str(), 1);
  setenv("STARPU_HOSTNAME", host.c_str(), 1);
  unsetenv("STARPU_PERF_MODEL_DIR");  // the models come from --models
  setenv("STARPU_NCPU", std::to_string(o.cpus).c_str(), 1);
  setenv("STARPU_NCUDA", std::to_string(o.gpus).c_str(), 1);
  setenv("STARPU_NOPENCL", "0", 1);
  setenv("STARPU_PERF_MODEL_HOMOGENEOUS_CUDA", "1", 1);  // every GPU uses GPU 0's perf models
  setenv("STARPU_SILENT", "1", 0);
  const char *sched = std::getenv("STARPU_SCHED");
  const std::string policy = !o.sched.empty() ? o.sched : sched ? sched : "dmda";

  const Dataset data =
      random_dataset(spec, size_t(o.batch) * size_t(o.timing.round), uint64_t(o.timing.seed));
  TrainTiming t;
  std::optional<PlanSearch> search;  // --plan auto
  std::string scheduler;
  MachineWorkers workers;
  {
    int argc = 1;  // SimGrid starts in starpu_init, from this command line
    char name[] = "simulate";
    char *args[] = {name, nullptr};
    char **argv = args;
    Runtime runtime(RuntimeOptions{"", policy, int(o.gpus), &argc, &argv});
    scheduler = runtime.scheduler();
    workers = runtime.workers();
#ifdef STARPU_SIMGRID
    if (o.estimate) estimate_missing_shapes();
    if (!overheads.file.empty()) charge_task_overheads(overheads.costs);
    if (!o.chains_at_mean) charge_chain_spread();
    if (o.estimate || !overheads.file.empty() ||
        !o.chains_at_mean)  // StarPU submits the reductions' tasks itself
      for (starpu_codelet *codelet : sum_reduction_codelets()) use_simulated_costs(*codelet);
    if (!o.free_reductions)
      for (starpu_codelet *codelet : sum_reduction_task_codelets()) time_internal_tasks(*codelet);
#endif
    std::string plan = o.plan;
    TimingOptions timing = o.timing;
    if (usage_errors_of("--plan", [&] { return is_measured_auto(parse_network_plan(plan)); })) {
      // train's measured search, every candidate measured on the simulated machine.
      search = search_plan_for_timing(spec, data, size_t(o.batch), workers, timing);
      plan = search->plan;
    }
    t = usage_errors_of("--plan", [&] {
      return time_training(spec, data, size_t(o.batch), plan, workers, timing);
    });
  }
  std::vector<std::string> estimated;
#ifdef STARPU_SIMGRID
  estimated = estimated_shapes();
#endif
  json::Array estimated_list;
  for (const std::string &shape : estimated) {
    estimated_list.string(shape);
    std::fprintf(stderr, "estimated (shape not calibrated): %s\n", shape.c_str());
  }

  json::Object line;
  line.string("engine", "starcnn-simgrid")
      .string("network", o.network)
      .integer("batch", o.batch)
      .string("plan", t.plan)
      .string("scheduler", scheduler)
      .string("models", o.models)
      .string("host", host)
      .integer("gpus", o.gpus)
      .integer("cpu_workers", workers.cpu)
      .integer("cuda_workers", workers.cuda)
      .integer("micro_batches", t.micro_batches)
      .string("cpu_chains", o.cpu_chains)
      .string("fusion", o.fusion)
      .string("cuda_chain", o.cuda_chain)
      .string("math", o.math)
      .string("overheads", overheads.file)
      .fixed("submit_us", overheads.costs.submit_us, 3)
      .fixed("cpu_task_us", overheads.costs.cpu_us, 3)
      .string("cpu_task_cost", overheads.cpu_key)
      .boolean("reductions_timed", !o.free_reductions)
      .boolean("chain_spread", !o.chains_at_mean)
      .fixed("cuda_task_us", overheads.costs.cuda_us, 3)
      .fixed("chain_start_gap_us", o.chains_at_mean ? 0.0 : overheads.costs.parallel_cpu_us, 3)
      .fixed("step_ms", t.step_ms, 4)
      .fixed("step_ms_mean", t.mean_ms, 4)
      .fixed("step_ms_min", t.min_ms, 4)
      .fixed("images_per_s", double(o.batch) * 1000.0 / t.step_ms, 1)
      .integer("tasks_per_step", t.tasks_per_step)
      .fixed("cpu_tasks_per_step", t.cpu_tasks_per_step, 1)
      .fixed("cuda_tasks_per_step", t.cuda_tasks_per_step, 1)
      .integer("warmup_steps", t.warmup_steps)
      .integer("steps", t.timed_steps)
      .array("estimated_shapes", estimated_list);
  if (search && !search->candidates.empty())
    line.array("auto_candidates", candidates_json(*search));
  std::printf("%s\n", line.text().c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%-8s %6s %4s %4s %-6s %10s %10s %7s %9s  %s\n", "network", "batch", "gpus",
               "cpus", "sched", "step_ms", "images/s", "tasks", "cpu/cuda", "plan");
  std::fprintf(stderr, "%-8s %6ld %4d %4d %-6s %10.3f %10.1f %7llu %4.0f/%-4.0f  %s\n",
               o.network.c_str(), o.batch, workers.cuda, workers.cpu, scheduler.c_str(), t.step_ms,
               double(o.batch) * 1000.0 / t.step_ms, (unsigned long long)t.tasks_per_step,
               t.cpu_tasks_per_step, t.cuda_tasks_per_step, t.plan.c_str());
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  Options o;
  o.timing.max_seconds = 1e6;  // simulated seconds: steps, not time, end the run
  return run_program("simulate", [&] {
    ArgParser args(
        "simulate",
        "Predicts the training step time of a network, batch and plan on a machine of --gpus\n"
        "GPUs and --cpus CPU workers with StarPU's SimGrid mode (build with `make simulate`:\n"
        "build-sim/perf/simulate). Tasks are not run: they take the times of the perf models\n"
        "and bus calibration of a real machine (--models), every simulated GPU being its GPU 0.\n"
        "Steps are timed as train_benchmark times them. STARPU_SCHED picks the scheduler\n"
        "(default dmda, as train_benchmark); STARPU_NCPU and STARPU_NCUDA are set from --cpus\n"
        "and --gpus. One JSON line on stdout, a table on stderr.");
    args.add("models", "DIR",
             "STARPU_HOME calibrated on a real machine: DIR/.starpu/sampling/{codelets,bus} (only "
             "read)",
             &o.models);
    args.add("host", "NAME", "which calibrated host of DIR (needed when it holds several)",
             &o.host);
    args.add("gpus", "N", "simulated GPUs (CUDA workers), each as the calibrated GPU 0", &o.gpus, 0,
             STARPU_MAXCUDADEVS);
    args.add("cpus", "N", "CPU workers (default: the calibrated machine's cores less one per GPU)",
             &o.cpus, 1, STARPU_MAXCPUS);
    args.add("network", "NAME", "lenet, wide or a .net file (fed 3x32x32 inputs)", &o.network);
    args.add("batch", "B", "samples per step", &o.batch, 1, 1 << 16);
    args.add("plan", "PLAN",
             "where the work runs, as train's --plan (cuda, cpu, samples:K, F@cuda0,F@cuda1, "
             "...); auto runs train's measured search on the simulated machine and reports "
             "every candidate",
             &o.plan);
    add_cpu_chains_option(args, &o.cpu_chains);
    add_cuda_chain_option(args, &o.cuda_chain);
    args.add_choice("fusion", {"on", "off"},
                    "a whole convolution's ReLU and maxpool in its own tasks (as train_benchmark's "
                    "--fusion on) or as tasks of their own",
                    &o.fusion);
    args.add("sched", "NAME", "StarPU scheduler (default: $STARPU_SCHED, else dmda)", &o.sched);
    args.add_flag("estimate",
                  "estimate the times of task shapes the perf models lack from the entries of "
                  "nearest data size (listed in the output), instead of stopping on the first",
                  &o.estimate);
    args.add("overheads", "FILE",
             "StarPU's cost per task on the calibrated machine, perf/task_overhead's JSON line, "
             "charged on top of the perf models' times (default: DIR/task_overhead.json of "
             "--models where it exists)",
             &o.overheads);
    args.add("cpu-task-cost", "KIND",
             "which measurement of the overheads file a CPU task is charged: handoff (its "
             "cpu_handoff_us, a dependent task pushed onto another CPU worker, as dmda places "
             "most; cpu_chain_us in files without it) or chain (cpu_chain_us, a chain that stays "
             "on one worker; the charge before handoff was measured)",
             &o.cpu_task_cost);
    args.add_flag("no-overheads",
                  "charge the perf models' times alone (StarPU's cost per task "
                  "left out)",
                  &o.no_overheads);
    args.add_flag("free-reductions",
                  "let the STARPU_REDUX reductions' sums take no time, as StarPU's simulation "
                  "does with the tasks it submits itself (simulate before it timed them)",
                  &o.free_reductions);
    args.add_flag("chains-at-mean",
                  "charge each CPU chain task its perf model's mean, not its place in the spread "
                  "of the chains a step runs side by side (the k-th of n: mean + deviation * "
                  "E[k-th smallest of n standard normals], started k - 1 times the overheads' "
                  "cpu_parallel_chain_us late)",
                  &o.chains_at_mean);
    args.add("warmup", "N", "untimed steps first (whole rounds)", &o.timing.warmup, 1, 100000);
    args.add("steps", "N", "timed steps, rounded up to whole rounds", &o.timing.steps, 1, 1000000);
    args.add("round", "N", "steps per timed round (the host waits at the end of each)",
             &o.timing.round, 1, 10000);
    args.add("micro-batches", "N", "micro-batches per step, as train's (0: its default)",
             &o.timing.micro_batches, 0, 1 << 20);
    args.add("seed", "N", "seed of the weights and the random data", &o.timing.seed, 0, 1L << 40);
    add_math_option(args, &o.math);
    args.add("keep-home", "DIR",
             "write the simulated machine's STARPU_HOME here (a new directory) and keep it",
             &o.keep_home);
    if (!args.parse(argc, argv)) return 0;
    apply_math_option(o.math);  // a CUDA chain's perf model keeps each math apart
    // As train_benchmark's: the same task flow for the same flags.
    o.timing.pin_cpu_chains = parse_cpu_chains(o.cpu_chains);
    o.timing.fuse_layers = o.fusion == "on";
    o.timing.cuda_chain = parse_cuda_chain(o.cuda_chain);
    return run(o);
  });
}
