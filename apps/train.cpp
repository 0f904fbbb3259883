// starcnn's training app: trains a network on a data set with StarPU's CPU and CUDA workers,
// prints progress and a summary per epoch, saves checkpoints, and ends with one JSON line. With
// --trace DIR it records StarPU's FxT trace of the run and converts it (apps/cli/trace.h).
#include "apps/cli/args.h"
#include "apps/cli/progress.h"
#include "apps/cli/trace.h"
#include "model/data/dataset.h"
#include "model/io/checkpoint.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/runtime/run_stats.h"
#include "model/runtime/runtime.h"
#include "model/train/plan_calibration.h"
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
  std::string data = "mnist", data_dir = default_data_dir(), network = "lenet", plan = "none";
  std::string checkpoint, init, trace, lr_schedule = "constant";
  long epochs = 3, batch = 64, seed = 1, eval_every = 1, log_every = 100, max_steps = 0;
  long micro_batches = 0;  // 0: chosen from the workers (choose_micro_batches)
  bool stats = false;
  double lr = 0.02, momentum = 0.9, weight_decay = 0.0;
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
  args.add("epochs", "N", "passes over the training set", &o.epochs, 0, 100000);
  args.add("batch", "N", "samples per step", &o.batch, 1, 1 << 20);
  args.add_alias("batch-size", "batch");
  args.add("micro-batches", "N",
           "cut each step's batch into N micro-batches, each its own chain of tasks (gradients "
           "summed, the same step): parallel work for the workers. 0: one per CPU worker "
           "(micro-batches of 16 samples or more) without CUDA workers, else 1",
           &o.micro_batches, 0, 1 << 20);
  args.add("lr", "F", "learning rate", &o.lr, 0.0, 1e6);
  args.add("lr-schedule", "constant|cosine",
           "the learning rate throughout, or annealed along a cosine to zero at the last step of "
           "the last epoch (a resumed run continues the curve when given the same total)",
           &o.lr_schedule);
  args.add("momentum", "F", "SGD momentum", &o.momentum, 0.0, 1.0);
  args.add("weight-decay", "F", "SGD weight decay (L2)", &o.weight_decay, 0.0, 1e6);
  args.add("seed", "N", "seed of the initial weights and of the shuffling", &o.seed, 0, LONG_MAX);
  args.add("plan", "PLAN",
           "split plan of every conv: none, even:K, cpu:N, F@cpu,F@cuda,... or auto (chosen from "
           "StarPU's perf models, calibrated first where needed); per layer with 'PLAN;conv2=PLAN'",
           &o.plan);
  args.add("checkpoint", "FILE",
           "save the weights here (safetensors) after each epoch and on Ctrl-C", &o.checkpoint);
  args.add("init", "FILE", "start from this checkpoint (weights, momentum and step count)",
           &o.init);
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
  args.add_flag("stats",
                "profile the training steps with StarPU: worker busy/idle fractions, tasks per "
                "worker kind and bytes moved between RAM and GPUs, in the JSON summary",
                &o.stats);
  *run = args.parse(argc, argv);
  if (o.lr_schedule != "constant" && o.lr_schedule != "cosine")
    throw UsageError("--lr-schedule must be constant or cosine, got '" + o.lr_schedule + "'");
  return o;
}

std::string json_summary(const Options &o, const Runtime &runtime, const EpochSummary &last,
                         const Evaluation *test, int64_t step, size_t micro_batches,
                         uint64_t tasks_per_step, const AutoPlanning *planning,
                         const RunStats *stats) {
  char line[8192];
  std::snprintf(
      line, sizeof(line),
      "{\"event\": \"summary\", \"network\": \"%s\", \"data\": \"%s\", \"scheduler\": \"%s\", "
      "\"workers\": \"%s\", \"plan\": \"%s\", \"batch\": %ld, \"micro_batches\": %zu, "
      "\"epochs\": %zu, \"steps\": %lld, "
      "\"train_loss\": %.6f, \"train_accuracy\": %.6f, \"test_loss\": %s, \"test_accuracy\": %s, "
      "\"images_per_s\": %.1f, \"seconds\": %.3f, \"tasks_per_step\": %llu, \"interrupted\": "
      "%s%s%s%s}\n",
      o.network.c_str(), o.data.c_str(), runtime.scheduler().c_str(),
      runtime.describe_workers().c_str(), o.plan.c_str(), o.batch, micro_batches, last.epoch + 1,
      (long long)step, last.train_loss, last.train_accuracy,
      test ? std::to_string(test->loss).c_str() : "null",
      test ? std::to_string(test->accuracy).c_str() : "null", last.images_per_s, last.seconds,
      (unsigned long long)tasks_per_step, last.interrupted ? "true" : "false",
      planning
          ? (", \"auto_plan\": \"" + planning->text + "\", \"auto_predicted_conv_ms\": " +
             (std::isnan(planning->predicted_us) ? std::string("null")
                                                 : std::to_string(planning->predicted_us / 1000.0)))
                .c_str()
          : "",
      stats ? ", \"stats\": " : "", stats ? stats->to_json().c_str() : "");
  return line;
}

void save(const Options &o, const NetworkSpec &spec, const Dataset &data, ParameterSet &params,
          int64_t step, int64_t epoch) {
  if (o.checkpoint.empty()) return;
  Checkpoint ckpt;
  ckpt.network = spec.text;
  ckpt.preprocess = data.preprocess;
  ckpt.step = step;
  ckpt.epoch = epoch;
  ckpt.parameters = params.read(false);
  if (o.momentum != 0.0) ckpt.momentum = params.read(true);
  save_checkpoint(o.checkpoint, ckpt);
  std::printf("saved %s (step %lld)\n", o.checkpoint.c_str(), (long long)step);
}

// Trains; StarPU runs only inside. Leaves the JSON summary line in *summary.
int run(const Options &o, std::string *summary) {
  std::printf("loading %s from %s\n", o.data.c_str(), o.data_dir.c_str());
  const Dataset train = load_dataset(o.data, Subset::train, o.data_dir);
  const Dataset test = load_dataset(o.data, Subset::test, o.data_dir);
  NetworkSpec spec = load_network(o.network);
  if (spec.input.c != int(train.channels)) spec = with_input_channels(spec, int(train.channels));
  if (spec.input.h != int(train.height) || spec.input.w != int(train.width))
    throw std::invalid_argument(spec.source + " takes " + std::to_string(spec.input.h) + "x" +
                                std::to_string(spec.input.w) + " inputs, " + o.data + " has " +
                                std::to_string(train.height) + "x" + std::to_string(train.width));

  Runtime runtime({o.trace});
  std::printf("StarPU scheduler %s, %s\n", runtime.describe_scheduler().c_str(),
              runtime.describe_workers().c_str());
  const int micro_batches =
      choose_micro_batches(o.micro_batches, runtime.workers(), size_t(o.batch));
  const MicroBatchShare share =
      micro_batch_share(runtime.workers(), size_t(o.batch), micro_batches);
  NetworkPlanText plans = usage_errors_of("--plan", [&] { return parse_network_plan(o.plan); });
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
  TrainConfig config;
  config.batch = size_t(o.batch);
  config.lr = float(o.lr);
  config.momentum = float(o.momentum);
  config.weight_decay = float(o.weight_decay);
  config.seed = uint64_t(o.seed);
  config.log_every = size_t(o.log_every);
  config.max_steps = o.max_steps;
  config.micro_batches = micro_batches;
  Trainer trainer =
      usage_errors_of("--micro-batches", [&] { return Trainer(spec, params, train, config); });
  if (!o.init.empty()) {
    const Checkpoint ckpt = load_checkpoint(o.init, spec);
    params.write(ckpt.parameters, false);
    if (!ckpt.momentum.empty()) params.write(ckpt.momentum, true);
    trainer.resume(ckpt.step, !ckpt.momentum.empty());
    start_epoch = ckpt.epoch;
    std::printf("resumed from %s at step %lld, epoch %lld\n", o.init.c_str(), (long long)ckpt.step,
                (long long)ckpt.epoch);
  }
  std::printf("network %s on %s: %zu train / %zu test images of %zux%zux%zu\n", spec.source.c_str(),
              o.data.c_str(), train.count, test.count, train.channels, train.height, train.width);
  for (const std::string &line : trainer.network().describe()) std::printf("  %s\n", line.c_str());
  if (trainer.micro_batches() > 1)
    std::printf("batch %ld in %zu micro-batches (each its own task chain, gradients summed)\n",
                o.batch, trainer.micro_batches());
  if (o.lr_schedule == "cosine") {
    const int64_t last_step = (start_epoch + o.epochs) * int64_t(trainer.batches_per_epoch());
    trainer.anneal_lr_until(last_step);
    std::printf("learning rate %g annealed along a cosine to 0 at step %lld\n", o.lr,
                (long long)last_step);
  }

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  ProgressPrinter progress(size_t(start_epoch + o.epochs), size_t(o.batch));
  RunStats stats;  // of the training steps only: evaluation and set-up are left out
  EpochSummary last;
  Evaluation eval;
  bool evaluated = false;
  for (int64_t epoch = start_epoch; epoch < start_epoch + o.epochs; ++epoch) {
    if (o.stats) stats.begin();
    last = trainer.train_epoch(
        size_t(epoch), [&](const Progress &p) { progress.step(p); }, stop_requested);
    if (o.stats) stats.end();
    progress.finish_line();
    const bool eval_now =
        o.eval_every > 0 && ((epoch + 1 - start_epoch) % o.eval_every == 0 || last.interrupted ||
                             last.reached_max_steps || epoch + 1 == start_epoch + o.epochs);
    evaluated = eval_now && !last.interrupted;
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
    save(o, spec, train, params, trainer.step(), last.complete ? epoch + 1 : epoch);
    if (last.interrupted || last.reached_max_steps) break;
  }
  *summary = json_summary(o, runtime, last, evaluated ? &eval : nullptr, trainer.step(),
                          trainer.micro_batches(), trainer.tasks_per_step(),
                          planning ? &*planning : nullptr, o.stats ? &stats : nullptr);
  if (last.interrupted) {
    std::fprintf(stderr, "train: interrupted\n");
    return 130;
  }
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  return run_program("train", [&] {
    bool run_it = false;
    const Options options = parse_options(argc, argv, &run_it);
    if (!run_it) return 0;
    if (!options.trace.empty()) {
      ensure_starpu_with_fxt(argv);
      prepare_trace_dir(options.trace);
    }
    std::string summary;
    int status = run(options, &summary);
    // StarPU has shut down and written the trace: convert it before the closing JSON line.
    if (!options.trace.empty() && !finish_trace(options.trace) && status == 0) status = 1;
    std::printf("%s", summary.c_str());
    return status;
  });
}
