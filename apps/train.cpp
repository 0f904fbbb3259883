// starcnn's training app: trains a network on a data set with StarPU's CPU and CUDA workers,
// prints progress and a summary per epoch, saves checkpoints, and ends with one JSON line. With
// --trace DIR it records StarPU's FxT trace of the run and converts it (apps/cli/trace.h).
// Launched by mpirun, each process is one rank of a data-parallel run (model/dist/): each takes
// its shard of every batch, gradients are summed across ranks, and rank 0 alone prints and saves.
#include "apps/cli/args.h"
#include "apps/cli/blas_core.h"
#include "apps/cli/cpu_chains_option.h"
#include "apps/cli/cuda_chain_option.h"
#include "apps/cli/math_option.h"
#include "apps/cli/output_dir.h"
#include "apps/cli/progress.h"
#include "apps/cli/trace.h"
#include "model/data/dataset.h"
#include "model/dist/batch_shards.h"
#include "model/dist/host_cores.h"
#include "model/dist/world.h"
#include "model/io/atomic_file.h"
#include "model/io/checkpoint.h"
#include "model/io/json.h"
#include "model/nn/network_memory.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/runtime/run_stats.h"
#include "model/runtime/runtime.h"
#include "model/train/chain_samples.h"
#include "model/train/plan_calibration.h"
#include "model/train/plan_search.h"
#include "model/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace starcnn {
namespace {

std::atomic<bool> stop_requested{false};

void on_interrupt(int) {
  stop_requested.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the program at once
}

struct Options {
  std::string data = "mnist", data_dir = default_data_dir(), network = "lenet";
  std::string plan;  // empty: auto where there are CUDA workers, none elsewhere
  std::string checkpoint, output_dir, init, resume, trace, lr_schedule = "constant";
  std::string rank_shares = "even";
  std::string math = kDefaultProgramMath;
  std::string cpu_chains = "auto";
  std::string cuda_chain = "graph";
  bool init_any_network = false;
  long epochs = 3, batch = 64, seed = 1, eval_every = 1, log_every = 100, max_steps = 0;
  long micro_batches = 0;  // 0: chosen from the workers (choose_micro_batches)
  bool stats = false;
  double lr = 0.02, momentum = 0.9, weight_decay = 0.0;

  // The checkpoint this run starts from (--init or --resume), or "".
  const std::string &start_from() const { return resume.empty() ? init : resume; }
  // The epoch (counted from 0) at which this run stops, when it starts at `first`: --epochs is
  // the total with --resume (torchvision's meaning), more epochs otherwise.
  int64_t end_epoch(int64_t first) const { return resume.empty() ? first + epochs : epochs; }
};

Options parse_options(int argc, char **argv, bool *run) {
  Options o;
  ArgParser args("train",
                 "Trains a CNN with StarPU on CPU and CUDA workers. The scheduler is StarPU's\n"
                 "STARPU_SCHED (eager, lws, dmda, dmdas, ...; unset: dmdas with a GPU, lws\n"
                 "without); STARPU_NCPU and STARPU_NCUDA limit the workers.");
  args.add("data", "NAME", "data set: mnist, fashion or cifar10:DIR", &o.data);
  args.add("data-dir", "DIR", "where scripts/fetch-data put mnist/ and fashion/", &o.data_dir);
  args.add("network", "NAME|FILE", "lenet, wide, or a network description file", &o.network);
  args.add("epochs", "N",
           "passes over the training set; with --resume in all, the checkpoint's included, with "
           "--init this many more",
           &o.epochs, 1, 100000);
  args.add("batch", "N", "samples per step", &o.batch, 1, 1 << 20);
  args.add_alias("batch-size", "batch");
  args.add(
      "micro-batches", "N",
      "cut each step's batch into N micro-batches, each its own chain of tasks (gradients "
      "summed, the same step): parallel work for the workers. 0: one per CPU worker "
      "(micro-batches of enough samples for their tasks: 8 for lenet, 1 for wide) without CUDA "
      "workers, else 1",
      &o.micro_batches, 0, 1 << 20);
  add_cpu_chains_option(args, &o.cpu_chains);
  add_cuda_chain_option(args, &o.cuda_chain);
  args.add("lr", "F", "learning rate", &o.lr, 0.0, 1e6);
  args.add_choice("lr-schedule", {"constant", "cosine"},
                  "the learning rate throughout, or annealed along a cosine to zero at the last "
                  "step of the last epoch (a resumed run continues the curve when given the same "
                  "total)",
                  &o.lr_schedule);
  args.add("momentum", "F", "SGD momentum", &o.momentum, 0.0, 1.0);
  args.add("weight-decay", "F", "SGD weight decay (L2)", &o.weight_decay, 0.0, 1e6);
  args.add("seed", "N", "seed of the initial weights and of the shuffling", &o.seed, 0, LONG_MAX);
  args.add("plan", "PLAN",
           "where the work runs: auto (measures the GPU alone, the CPU alone, a filter split and "
           "sample splits for a few steps each and keeps the fastest; the default with CUDA "
           "workers), cuda, cpu, samples:K[/M][xB] (K samples of each step on the CPU workers, "
           "in M chains; xB: the chains claim blocks of B samples from each other), "
           "none (the scheduler places every op; the default without CUDA workers), or a split "
           "of every conv's filters: even:K, cpu:N, F@cpu,F@cuda,...; cudaN (as a plan or a "
           "part's place, F@cuda0,F@cuda1) pins work to CUDA device N's worker; per layer with "
           "'PLAN;conv2=PLAN' (conv2=auto: the perf-model chooser)",
           &o.plan);
  args.add("checkpoint", "FILE",
           "save the weights here (safetensors) after each epoch and on Ctrl-C; a save that fails "
           "(a full disk) keeps the last good file and training goes on; weights that are no "
           "longer finite are never saved and stop the run",
           &o.checkpoint);
  args.add("output-dir", "DIR",
           "save into DIR (created if missing) after each epoch: epoch-001.safetensors, ... and "
           "last.safetensors (also on Ctrl-C: what --resume takes), and best.safetensors, the "
           "epoch of best test accuracy of this run (lowest training loss with --eval-every 0; "
           "epochs not evaluated do not compete); may go with --checkpoint, which gets the same "
           "weights as last.safetensors",
           &o.output_dir);
  args.add("resume", "FILE",
           "continue the run saved in this checkpoint (weights, momentum, step and epoch count) "
           "up to --epochs epochs in all, as torchvision's scripts do; a checkpoint that has "
           "reached them exits with status 0 without training. Its network and preprocessing "
           "must be this run's",
           &o.resume);
  args.add("init", "FILE",
           "start from this checkpoint as --resume does, then train --epochs more epochs", &o.init);
  args.add_flag(
      "init-any-network",
      "with --init or --resume: resume even when the checkpoint's network text or preprocessing "
      "differ from this run's (the tensors must still fit)",
      &o.init_any_network);
  args.add("eval-every", "N", "evaluate on the test set every N epochs (0: never)", &o.eval_every,
           0, 100000);
  args.add("log-every", "N", "steps between progress reports", &o.log_every, 1, 1 << 30);
  args.add("max-steps", "N",
           "stop after N training steps of this run, over all epochs (0: no limit)", &o.max_steps,
           0, LONG_MAX);
  args.add("trace", "DIR",
           "record StarPU's FxT trace into DIR and convert it for StarVZ/ViTE (paje.trace, "
           "tasks.rec, ...) plus trace.png (panels) and summary.txt; keep runs short (--max-steps, "
           "--eval-every 0)",
           &o.trace);
  args.add("rank-shares", "even|W,W,...",
           "under mpirun: how each step's batch is cut across ranks, evenly or in proportion to "
           "one weight per rank (e.g. 3,1: rank 0 takes three quarters)",
           &o.rank_shares);
  args.add_flag("stats",
                "profile the training steps with StarPU: worker busy/idle fractions, tasks per "
                "worker kind and bytes moved between RAM and GPUs, in the JSON summary",
                &o.stats);
  add_math_option(args, &o.math);
  *run = args.parse(argc, argv);
  if (!o.init.empty() && !o.resume.empty())
    throw UsageError(
        "--init and --resume cannot go together (--resume: --epochs counts all epochs; --init: "
        "--epochs more)");
  if (o.init_any_network && o.start_from().empty())
    throw UsageError("--init-any-network needs --init FILE or --resume FILE");
  return o;
}

// The summary line's fields; the caller adds the ranks' (add_rank_fields) and writes it.
json::Object json_summary(const Options &o, const std::string &plan, const Runtime &runtime,
                          const EpochSummary &last, const Evaluation *test, int64_t step,
                          size_t micro_batches, uint64_t tasks_per_step,
                          const AutoPlanning *planning, const RunStats *stats) {
  json::Object summary;
  summary.string("event", "summary")
      .string("network", o.network)
      .string("data", o.data)
      .string("data_dir", o.data_dir)
      .string("scheduler", runtime.scheduler())
      .string("workers", runtime.describe_workers())
      .string("plan", plan)
      .string("math", o.math)
      .integer("batch", o.batch)
      .integer("micro_batches", micro_batches)
      .string("cpu_chains", o.cpu_chains)
      .string("cuda_chain", o.cuda_chain)
      .boolean("fold_update", update_fold_asked())
      .integer("epochs", last.epoch + 1)
      .integer("steps", step)
      .fixed("train_loss", last.train_loss, 6)
      .fixed("train_accuracy", last.train_accuracy, 6);
  if (test)
    summary.fixed("test_loss", test->loss, 6).fixed("test_accuracy", test->accuracy, 6);
  else
    summary.null("test_loss").null("test_accuracy");
  summary.fixed("images_per_s", last.images_per_s, 1)
      .fixed("seconds", last.seconds, 3)
      .integer("tasks_per_step", tasks_per_step)
      .boolean("interrupted", last.interrupted);
  if (planning)
    summary.string("auto_plan", planning->text)
        .fixed("auto_predicted_conv_ms", planning->predicted_us / 1000.0, 6);
  if (stats) summary.raw("stats", stats->to_json());
  return summary;
}

// Checkpoint saves, to --checkpoint and into --output-dir: a failed write (a full disk) keeps the
// last good file, says so, and training goes on (the run's exit status says it in the end);
// weights that are no longer finite are never written and stop the run.
class CheckpointSaver {
 public:
  CheckpointSaver(const Options &o, const NetworkSpec &spec, const Dataset &data)
      : o_(o), spec_(spec), data_(data) {
    if (!o.checkpoint.empty()) latest_.push_back({o.checkpoint});
    if (!o.output_dir.empty()) latest_.push_back({last_checkpoint_path(o.output_dir)});
  }

  // Saves after `epoch` (counted from 0), whose test evaluation is `test` (or none). False when
  // the weights are no longer finite (nothing written; the run must stop).
  bool save(ParameterSet &params, int64_t step, const EpochSummary &epoch, const Evaluation *test) {
    if (latest_.empty()) return true;
    Checkpoint ckpt;
    ckpt.network = spec_.text;
    ckpt.preprocess = data_.preprocess;
    ckpt.step = step;
    ckpt.epoch = epoch.complete ? int64_t(epoch.epoch) + 1 : int64_t(epoch.epoch);
    ckpt.math = o_.math;
    ckpt.parameters = params.read(false);
    if (o_.momentum != 0.0) ckpt.momentum = params.read(true);
    std::string bad = first_non_finite(ckpt.parameters);
    if (bad.empty()) bad = first_non_finite(ckpt.momentum);
    if (!bad.empty()) {
      std::fprintf(stderr,
                   "train: the weights are no longer finite at step %lld (%s): not saved; %s\n",
                   (long long)step, bad.c_str(), kept().c_str());
      return false;
    }
    last_failed_ = false;
    std::string saved;  // the files written, for the log
    auto save_to = [&](const std::string &path) {
      const bool ok = write(path, ckpt);
      if (ok) saved += (saved.empty() ? "" : ", ") + path;
      return ok;
    };
    for (Latest &latest : latest_)
      if (save_to(latest.path)) latest.saved_step = step;
    if (!o_.output_dir.empty() && epoch.complete) {
      save_to(epoch_checkpoint_path(o_.output_dir, ckpt.epoch));
      // Test accuracy where this epoch was evaluated, else (no evaluation at all) training loss.
      if ((o_.eval_every == 0 || test) && best_.offer(test ? test->accuracy : -epoch.train_loss))
        save_to(best_checkpoint_path(o_.output_dir));
    }
    if (!saved.empty()) std::printf("saved %s (step %lld)\n", saved.c_str(), (long long)step);
    return true;
  }
  bool last_save_failed() const { return last_failed_; }
  // What the latest checkpoints (--checkpoint, --output-dir's last) hold now.
  std::string kept() const {
    std::string text;
    for (const Latest &latest : latest_)
      text += (text.empty() ? "" : "; ") + latest.path +
              (latest.saved_step < 0 ? " keeps what it held before this run"
                                     : " keeps step " + std::to_string(latest.saved_step));
    return text;
  }

 private:
  struct Latest {
    std::string path;
    int64_t saved_step = -1;
  };
  bool write(const std::string &path, const Checkpoint &ckpt) {
    try {
      save_checkpoint(path, ckpt);
      return true;
    } catch (const SafetensorsError &e) {
      last_failed_ = true;
      std::fprintf(stderr, "train: warning: %s; %s; training goes on\n", e.what(), kept().c_str());
      return false;
    }
  }
  const Options &o_;
  const NetworkSpec &spec_;
  const Dataset &data_;
  std::vector<Latest> latest_;
  BestEpoch best_;
  bool last_failed_ = false;
};

// Everything about the network and the data that can be wrong is checked before StarPU starts
// and anything large is allocated; errors name the flag.
void check_network_and_data(const Options &o, const NetworkSpec &spec, const Dataset &train,
                            const Dataset &test) {
  if (spec.input.h != int(train.height) || spec.input.w != int(train.width))
    throw UsageError("--network: " + spec.source + " takes " + std::to_string(spec.input.h) + "x" +
                     std::to_string(spec.input.w) + " inputs, " + o.data + " has " +
                     std::to_string(train.height) + "x" + std::to_string(train.width));
  if (spec.output().size() != train.num_classes)
    throw UsageError("--network: " + spec.source + " ends in " + to_string(spec.output()) +
                     " outputs, " + o.data + " has " + std::to_string(train.num_classes) +
                     " classes (the last linear layer must have as many)");
  if (size_t(o.batch) > train.count)
    throw UsageError("--batch " + std::to_string(o.batch) + " is larger than the training set (" +
                     std::to_string(train.count) + " samples of " + o.data + ")");
  if (o.micro_batches > o.batch)
    throw UsageError("--micro-batches " + std::to_string(o.micro_batches) +
                     " must be at most the batch size (" + std::to_string(o.batch) + ")");
  if (o.eval_every > 0 && test.count == 0)
    throw UsageError("the test set of " + o.data + " is empty (--eval-every 0 skips evaluation)");
  usage_errors_of("--batch", [&] {
    check_network_fits_memory(spec, size_t(o.batch), true, "batch " + std::to_string(o.batch));
    return 0;
  });
}

// This rank's shard of every batch: all of it when alone.
BatchShard rank_shard(const Options &o, const MpiWorld &world) {
  if (world.size() < 2) return {0, size_t(o.batch)};
  const std::vector<double> weights = o.rank_shares == "even"
                                          ? std::vector<double>(size_t(world.size()), 1.0)
                                          : usage_errors_of("--rank-shares", [&] {
                                              return parse_rank_shares(o.rank_shares, world.size());
                                            });
  return usage_errors_of(
      "--rank-shares", [&] { return shard_batch(size_t(o.batch), weights); })[size_t(world.rank())];
}

// ", \"ranks\": 2, ..." for the JSON summary of a data-parallel run.
void add_rank_fields(json::Object &summary, const MpiWorld &world, const BatchShard &shard,
                     const RankSum *sum, int64_t steps) {
  if (world.size() < 2) return;
  const double bytes = sum ? double(sum->bytes_sent() + sum->bytes_received()) : 0.0;
  summary.integer("ranks", world.size())
      .integer("rank0_batch", shard.size)
      .number("rank0_bytes_per_step", steps > 0 ? bytes / double(steps) : 0.0);
}

int train_network(const Options &o, const NetworkSpec &spec, const Dataset &train,
                  const Dataset &test, const std::optional<Checkpoint> &init,
                  std::optional<Runtime> &runtime, MpiWorld &world, std::string *summary);

// A failing rank stops the others at once: they would otherwise wait for its gradients forever.
[[noreturn]] void stop_every_rank(MpiWorld &world, const char *what, int status) {
  std::fprintf(stderr, "train: rank %d of %d: %s%s; stopping every rank\n", world.rank(),
               world.size(), status == 2 ? "" : "error: ", what);
  world.abort(status);
}

// Runs `body`; when it fails on one rank of several, every rank stops with its message.
template <typename Body>
int stopping_every_rank_on_error(MpiWorld &world, const Body &body) {
  try {
    return body();
  } catch (const UsageError &e) {
    if (world.size() > 1) stop_every_rank(world, e.what(), 2);
    throw;
  } catch (const std::exception &e) {
    if (world.size() > 1) stop_every_rank(world, e.what(), 1);
    throw;
  }
}

// Loads the data, the network and the checkpoint to resume, then trains; StarPU runs only
// inside. Leaves the JSON summary line in *summary.
int load_and_train(const Options &o, MpiWorld &world, std::string *summary) {
  std::printf("loading %s from %s\n", o.data.c_str(), o.data_dir.c_str());
  const Dataset train = load_dataset(o.data, Subset::train, o.data_dir);
  const Dataset test = load_dataset(o.data, Subset::test, o.data_dir);
  NetworkSpec spec = load_network(o.network);
  if (spec.input.c != int(train.channels)) spec = with_input_channels(spec, int(train.channels));
  check_network_and_data(o, spec, train, test);
  std::optional<Checkpoint> init;
  if (!o.start_from().empty()) {
    init = load_checkpoint(o.start_from(), spec);
    if (!o.init_any_network) check_same_run(*init, spec, train.preprocess, o.start_from());
    if (o.end_epoch(init->epoch) <= init->epoch) {
      std::printf("%s has reached epoch %lld, --epochs %ld: nothing left to train\n",
                  o.resume.c_str(), (long long)init->epoch, o.epochs);
      return 0;
    }
  }
  std::optional<Runtime> runtime;
  runtime.emplace(RuntimeOptions{o.trace, "", -1});
  StarpuMpiScope starpu_mpi(world);
  // Stopped before StarPU-MPI shuts down, which would wait for the other ranks forever.
  return stopping_every_rank_on_error(
      world, [&] { return train_network(o, spec, train, test, init, runtime, world, summary); });
}

int run(const Options &o, MpiWorld &world, std::string *summary) {
  return stopping_every_rank_on_error(world, [&] { return load_and_train(o, world, summary); });
}

// A plan (given, or auto's choice) that leaves the CPU workers idle runs on a StarPU restarted
// with one CPU worker (cpu_workers_for_plan says why); auto's choice runs on a fresh StarPU
// whatever it is (restart_for_plan). Not under mpirun (StarPU-MPI runs on top of this StarPU) nor
// while tracing (one trace per run).
void shed_idle_cpu_workers(const Options &o, const NetworkSpec &spec, const std::string &plan,
                           bool after_search, const MpiWorld &world,
                           std::optional<Runtime> &runtime) {
  const int before = runtime->workers().cpu;
  if (world.active() || !o.trace.empty() ||
      !restart_for_plan(runtime, RuntimeOptions{o.trace, "", -1}, spec, plan, after_search))
    return;
  if (runtime->workers().cpu == before) {
    std::printf(
        "plan %s runs on a fresh StarPU (the search's candidates slow the one they ran "
        "on)\n",
        plan.c_str());
    return;
  }
  std::printf(
      "plan %s leaves the CPU workers idle: StarPU restarted with %s (idle workers poll "
      "and slow the GPU's tasks; STARPU_NCPU keeps a number)\n",
      plan.c_str(), runtime->describe_workers().c_str());
}

int train_network(const Options &o, const NetworkSpec &spec, const Dataset &train,
                  const Dataset &test, const std::optional<Checkpoint> &init,
                  std::optional<Runtime> &started, MpiWorld &world, std::string *summary) {
  const Runtime &first = *started;
  std::printf("StarPU scheduler %s, %s\n", first.describe_scheduler().c_str(),
              first.describe_workers().c_str());
  if (first.workers().cuda > 0) std::printf("CUDA convolutions in %s (--math)\n", o.math.c_str());
  const BatchShard shard = rank_shard(o, world);
  const std::unique_ptr<RankSum> rank_sum = world.make_rank_sum();
  if (world.size() > 1)
    std::printf("rank 0 of %d ranks: samples %zu-%zu of each batch of %ld (--rank-shares %s)\n",
                world.size(), shard.first, shard.first + shard.size - 1, o.batch,
                o.rank_shares.c_str());
  TrainConfig config;
  config.batch = size_t(o.batch);
  config.lr = float(o.lr);
  config.momentum = float(o.momentum);
  config.weight_decay = float(o.weight_decay);
  config.seed = uint64_t(o.seed);
  config.log_every = size_t(o.log_every);
  config.pin_cpu_chains = parse_cpu_chains(o.cpu_chains);
  config.cuda_chain = parse_cuda_chain(o.cuda_chain);
  config.cpu_chain_samples = min_samples_per_cpu_chain(spec);
  config.shard = shard;
  MachineWorkers workers = first.workers();
  const std::string plan_text = !o.plan.empty() ? o.plan : workers.cuda > 0 ? "auto" : "none";
  NetworkPlanText plans = usage_errors_of("--plan", [&] { return parse_network_plan(plan_text); });
  std::optional<PlanSearch> search;
  if (is_measured_auto(plans)) {
    PlanSearchOptions search_options;
    if (!world.active() && o.trace.empty())  // one StarPU under MPI, one trace per run
      search_options.restart_runtime = [&] {
        started.reset();
        started.emplace(RuntimeOptions{o.trace, "", -1});
      };
    search = search_plans(spec, train, config, workers, search_options);
    for (const std::string &line : describe(*search)) std::printf("%s\n", line.c_str());
    plans = parse_network_plan(search->plan);
  }
  const bool searched = search && !search->candidates.empty();
  shed_idle_cpu_workers(o, spec, search ? search->plan : plan_text, searched, world, started);
  workers = started->workers();
  const Runtime &runtime = *started;
  // The search's micro-batches (one per GPU, where that won) unless the user gave a count.
  const long micro_batches =
      search ? chosen_micro_batches(*search, o.micro_batches) : o.micro_batches;
  apply_plan(plans, workers, micro_batches, config);
  const MicroBatchShare share = micro_batch_share(workers, shard.size, config.micro_batches);
  std::optional<AutoPlanning> planning;
  if (uses_auto_plan(spec, plans)) {
    planning = usage_errors_of(
        "--plan", [&] { return resolve_auto_plans(spec, plans, share.workers, int(share.batch)); });
    for (const std::string &line : describe(*planning)) std::printf("%s\n", line.c_str());
    plans = planning->plans;
  }
  ParameterSet params =
      usage_errors_of("--plan", [&] { return ParameterSet(spec, plans, share.workers); });
  params.initialize(uint64_t(o.seed));
  int64_t start_epoch = 0;
  config.max_steps = o.max_steps;
  config.rank_sum = rank_sum.get();
  Trainer trainer =
      usage_errors_of("--network", [&] { return Trainer(spec, params, train, config); });
  if (init) {
    const Checkpoint &ckpt = *init;
    params.write(ckpt.parameters, false);
    if (!ckpt.momentum.empty()) params.write(ckpt.momentum, true);
    trainer.resume(ckpt.step, !ckpt.momentum.empty());
    start_epoch = ckpt.epoch;
    std::printf("resumed from %s at step %lld, epoch %lld\n", o.start_from().c_str(),
                (long long)ckpt.step, (long long)ckpt.epoch);
  }
  std::printf("network %s on %s: %zu train / %zu test images of %zux%zux%zu\n", spec.source.c_str(),
              o.data.c_str(), train.count, test.count, train.channels, train.height, train.width);
  for (const std::string &line : trainer.network().describe()) std::printf("  %s\n", line.c_str());
  if (config.samples.cpu_samples > 0)
    std::printf(
        "batch %ld: %d samples on the CPU workers in %zu micro-batches, %ld on CUDA "
        "(gradients summed)\n",
        o.batch, config.samples.cpu_samples, trainer.micro_batches() - 1,
        o.batch - config.samples.cpu_samples);
  else if (trainer.micro_batches() > 1)
    std::printf("batch %ld in %zu micro-batches (each its own task chain, gradients summed)\n",
                o.batch, trainer.micro_batches());
  const int64_t end_epoch = o.end_epoch(start_epoch);
  if (o.lr_schedule == "cosine") {
    const int64_t last_step = end_epoch * int64_t(trainer.batches_per_epoch());
    trainer.anneal_lr_until(last_step);
    std::printf("learning rate %g annealed along a cosine to 0 at step %lld\n", o.lr,
                (long long)last_step);
  }

  const int64_t first_step = trainer.step();
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  ProgressPrinter progress(size_t(end_epoch), size_t(o.batch));
  CheckpointSaver saver(o, spec, train);
  bool weights_finite = true;
  RunStats stats;  // of the training steps only: evaluation and set-up are left out
  EpochSummary last;
  Evaluation eval;
  bool evaluated = false;
  for (int64_t epoch = start_epoch; epoch < end_epoch; ++epoch) {
    if (o.stats) stats.begin();
    last = trainer.train_epoch(
        size_t(epoch), [&](const Progress &p) { progress.step(p); }, stop_requested);
    if (o.stats) stats.end();
    progress.finish_line();
    const bool eval_now =
        o.eval_every > 0 && ((epoch + 1 - start_epoch) % o.eval_every == 0 || last.interrupted ||
                             last.reached_max_steps || epoch + 1 == end_epoch);
    evaluated = eval_now && !last.interrupted && world.rank() == 0;
    if (evaluated) eval = trainer.evaluate(test);
    std::printf("epoch %lld: train loss %.4f acc %.2f%%, %s%.0f img/s, %.1f s, %llu tasks/step\n",
                (long long)epoch + 1, last.train_loss, 100.0 * last.train_accuracy,
                evaluated ? ("test loss " + std::to_string(eval.loss).substr(0, 6) + " acc " +
                             std::to_string(100.0 * eval.accuracy).substr(0, 5) + "%, ")
                                .c_str()
                          : "",
                last.images_per_s, last.seconds, (unsigned long long)trainer.tasks_per_step());
    if (planning && last.steps > 0)
      std::printf("auto plan: predicted conv time %.3f ms per step, measured whole step %.3f ms\n",
                  planning->predicted_us / 1000.0, 1000.0 * last.seconds / double(last.steps));
    if (world.rank() == 0)
      weights_finite = saver.save(params, trainer.step(), last, evaluated ? &eval : nullptr);
    if (!weights_finite || last.interrupted || last.reached_max_steps) break;
  }
  json::Object fields =
      json_summary(o, search ? search->plan : plan_text, runtime, last, evaluated ? &eval : nullptr,
                   trainer.step(), trainer.micro_batches(), trainer.tasks_per_step(),
                   planning ? &*planning : nullptr, o.stats ? &stats : nullptr);
  add_rank_fields(fields, world, shard, rank_sum.get(), trainer.step() - first_step);
  *summary = fields.text() + "\n";
  if (last.interrupted) {
    std::fprintf(stderr, "train: interrupted\n");
    return 130;
  }
  if (!weights_finite) {
    std::fprintf(stderr,
                 "train: error: stopped: the weights are no longer finite (lower the learning "
                 "rate); %s\n",
                 saver.kept().c_str());
    return 1;
  }
  if (saver.last_save_failed()) {
    std::fprintf(stderr, "train: error: the last checkpoint save failed; %s\n",
                 saver.kept().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  fix_blas_core("train", argv);
  std::unique_ptr<MpiWorld> world;
  const int exit_status = run_program("train", [&] {
    bool run_it = false;
    const Options options = parse_options(argc, argv, &run_it);
    if (!run_it) return 0;
    prepare_run(options.math);
    if (!options.checkpoint.empty()) try {
        check_writable_destination(options.checkpoint);
      } catch (const AtomicFileError &e) {
        throw UsageError(std::string("--checkpoint: ") + e.what());
      }
    if (!options.output_dir.empty()) try {
        prepare_output_dir(options.output_dir);
      } catch (const AtomicFileError &e) {
        throw UsageError(std::string("--output-dir: ") + e.what());
      }
    if (!options.trace.empty()) {
      ensure_starpu_with_fxt(argv);
      prepare_trace_dir(options.trace);
    }
    world = std::make_unique<MpiWorld>(&argc, &argv);
    // Rank 0 alone prints; the others keep stderr for their errors.
    if (world->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
      throw std::runtime_error("cannot silence the output of rank " +
                               std::to_string(world->rank()));
    if (const std::optional<HostCores> cores = place_rank_on_host_cores())
      std::printf(
          "rank %d shares this host with other ranks: %s (STARPU_WORKERS_CPUID, STARPU_NCPU)\n",
          world->rank(), cores->describe().c_str());
    std::string summary;
    int status = run(options, *world, &summary);
    world->barrier();  // every rank's StarPU has shut down and written its trace
    // StarPU has shut down and written the trace: convert it before the closing JSON line. No
    // summary: StarPU never started (a --resume with nothing left to train), there is no trace.
    if (!options.trace.empty() && world->rank() == 0 && !summary.empty() &&
        !finish_trace(options.trace, world->size()) && status == 0)
      status = 1;
    std::printf("%s", summary.c_str());
    return status;
  });
  // A rank that failed before training (bad --init, ...) stops the others too.
  if (exit_status != 0 && world && world->size() > 1) world->abort(exit_status);
  return exit_status;
}
