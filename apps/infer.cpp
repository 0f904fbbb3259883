// starcnn's inference app: loads a checkpoint (its network description and preprocessing are
// inside) and either evaluates a data set (accuracy, loss, images/s, then one JSON line) or
// classifies PGM and PNG image files given as arguments (one line, or JSON object, per file).
#include "apps/cli/args.h"
#include "apps/cli/blas_core.h"
#include "apps/cli/image_file.h"
#include "apps/cli/math_option.h"
#include "model/data/dataset.h"
#include "model/io/checkpoint.h"
#include "model/io/json.h"
#include "model/nn/network_memory.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/runtime/runtime.h"
#include "model/train/evaluator.h"
#include "model/train/plan_calibration.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace starcnn {
namespace {

struct Options {
  std::string checkpoint, data, data_dir = default_data_dir(), split = "test", plan = "none";
  std::string math = kDefaultProgramMath;
  long batch = 1000, slots = 0;
  bool json = false;
  std::vector<std::string> images;
};

Options parse_options(int argc, char **argv, bool *run) {
  Options o;
  ArgParser args(
      "infer",
      "Runs a trained checkpoint forward only with StarPU on CPU and CUDA workers:\n"
      "evaluates a data set (--data) or classifies image files. Images are PNG, JPEG,\n"
      "BMP, PGM (P5/P2) or PPM (P6) of the network's input size before padding (28x28\n"
      "for MNIST-trained networks), converted to its channels (gray or RGB, alpha dropped).\n"
      "STARPU_SCHED picks the scheduler (unset: dmdas with a GPU, lws without).");
  args.add("checkpoint", "FILE", "the trained network (safetensors, written by train)",
           &o.checkpoint);
  args.add("data", "NAME", "evaluate this data set: mnist, fashion or cifar10:DIR", &o.data);
  args.add("data-dir", "DIR", "where scripts/fetch-data put mnist/ and fashion/", &o.data_dir);
  args.add_choice("split", {"test", "train"}, "which part of the data set", &o.split);
  args.add("batch", "N", "samples per batch", &o.batch, 1, 1 << 20);
  args.add_alias("batch-size", "batch");
  args.add("slots", "N", "networks taking batches in turn (0: one per worker, 2 to 8)", &o.slots, 0,
           64);
  args.add("plan", "PLAN",
           "split plan of every conv, as train's but without auto (whose costs are a training "
           "step's): none, even:K, cpu:N or F@cpu,F@cuda,...; per layer with 'PLAN;conv2=PLAN'",
           &o.plan);
  add_math_option(args, &o.math);
  args.add_flag("json", "classify: one JSON object per image instead of a text line", &o.json);
  args.add_positional("IMAGE", "image files to classify (when --data is not given)", &o.images);
  *run = args.parse(argc, argv);
  if (!*run) return o;
  if (o.checkpoint.empty()) throw UsageError("--checkpoint FILE is required (see --help)");
  if (o.data.empty() == o.images.empty())
    throw UsageError(o.data.empty() ? "give --data NAME or image files to classify (see --help)"
                                    : "give either --data or image files, not both");
  return o;
}

// The images as a data set preprocessed like the training data; every image must have the
// network's input size before padding (it is converted to the network's channels). Errors name
// each file that does not fit (all of them, not only the first).
Dataset images_as_dataset(const std::vector<std::string> &paths, const NetworkSpec &spec,
                          const Preprocess &pre) {
  const size_t channels = size_t(spec.input.c);
  const long height = spec.input.h - 2 * pre.pad, width = spec.input.w - 2 * pre.pad;
  std::vector<uint8_t> pixels;
  std::string errors;
  for (const std::string &path : paths) {
    try {
      const Image image = read_image(path, {size_t(width), size_t(height), channels});
      pixels.insert(pixels.end(), image.pixels.begin(), image.pixels.end());
    } catch (const ImageError &e) {
      errors += std::string(errors.empty() ? "" : "\n") + e.what();
    }
  }
  if (!errors.empty()) throw ImageError(errors);
  const std::vector<uint8_t> labels(paths.size(), 0);
  const int classes = int(spec.output().size());
  Dataset data = make_dataset(pixels.data(), labels.data(), paths.size(), channels, size_t(height),
                              size_t(width), classes, pre);
  data.name = "images";
  return data;
}

int run(const Options &o) {
  // Everything that can be wrong with the files is checked before StarPU starts.
  Checkpoint ckpt = read_checkpoint(o.checkpoint);
  const NetworkSpec spec = parse_network(ckpt.network, o.checkpoint + " (network)");
  check_checkpoint(ckpt, spec, o.checkpoint);
  // The padding is part of the network's input: one that leaves no image inside is refused
  // before a padded data set is built.
  if (2L * ckpt.preprocess.pad >= spec.input.h || 2L * ckpt.preprocess.pad >= spec.input.w)
    throw std::invalid_argument(o.checkpoint + ": its preprocessing pads each side by " +
                                std::to_string(ckpt.preprocess.pad) +
                                " pixels, which leaves no image inside its network's " +
                                to_string(spec.input) + " input");
  const size_t batch =
      o.images.empty() ? size_t(o.batch) : std::min(size_t(o.batch), o.images.size());
  check_network_fits_memory(spec, batch, false, "batch " + std::to_string(batch));
  const NetworkPlanText plans =
      usage_errors_of("--plan", [&] { return parse_network_plan(o.plan); });
  if (uses_auto_plan(spec, plans))
    throw UsageError("--plan auto is for training; give infer a fixed plan (see --help)");
  Dataset data;
  if (!o.data.empty()) {
    std::printf("loading %s %s from %s\n", o.data.c_str(), o.split.c_str(), o.data_dir.c_str());
    data = load_dataset(o.data, o.split == "test" ? Subset::test : Subset::train, ckpt.preprocess,
                        o.data_dir);
    if (data.num_classes != int(spec.output().size()))
      throw std::invalid_argument(o.data + " has " + std::to_string(data.num_classes) +
                                  " classes, the checkpoint's network " +
                                  std::to_string(spec.output().size()));
  } else {
    data = images_as_dataset(o.images, spec, ckpt.preprocess);
  }
  if (int(data.channels) != spec.input.c || int(data.height) != spec.input.h ||
      int(data.width) != spec.input.w)
    throw std::invalid_argument(o.checkpoint + " holds a network of " + to_string(spec.input) +
                                " inputs, " + o.data + " has " + std::to_string(data.channels) +
                                "x" + std::to_string(data.height) + "x" +
                                std::to_string(data.width) + " (after padding)");

  Runtime runtime;
  ParameterSet params =
      usage_errors_of("--plan", [&] { return ParameterSet(spec, plans, runtime.workers()); });
  params.write(ckpt.parameters, false);
  Evaluator evaluator(spec, params, size_t(o.batch), size_t(o.slots));
  const bool quiet = !o.images.empty() && o.json;
  if (!quiet) {
    std::printf("checkpoint %s: step %lld, epoch %lld, input %s, %d classes%s\n",
                o.checkpoint.c_str(), (long long)ckpt.step, (long long)ckpt.epoch,
                to_string(spec.input).c_str(), int(spec.output().size()),
                ckpt.math.empty() ? "" : (", trained with " + ckpt.math + " math").c_str());
    std::printf("StarPU scheduler %s, %s; batch %ld, %zu slots, plan %s, math %s\n",
                runtime.describe_scheduler().c_str(), runtime.describe_workers().c_str(), o.batch,
                evaluator.slots(), o.plan.c_str(), o.math.c_str());
  }

  if (!o.data.empty()) {
    const Evaluation e = evaluator.evaluate(data);
    std::printf("%s %s: %zu images, accuracy %.2f%%, loss %.4f, %.0f img/s, %.3f s\n",
                o.data.c_str(), o.split.c_str(), e.samples, 100.0 * e.accuracy, e.loss,
                e.images_per_s, e.seconds);
    const std::string line = json::Object()
                                 .string("event", "evaluation")
                                 .string("checkpoint", o.checkpoint)
                                 .string("data", o.data)
                                 .string("split", o.split)
                                 .string("scheduler", runtime.scheduler())
                                 .string("workers", runtime.describe_workers())
                                 .string("plan", o.plan)
                                 .string("math", o.math)
                                 .integer("batch", o.batch)
                                 .integer("slots", evaluator.slots())
                                 .integer("samples", e.samples)
                                 .fixed("accuracy", e.accuracy, 6)
                                 .fixed("loss", e.loss, 6)
                                 .fixed("images_per_s", e.images_per_s, 1)
                                 .fixed("seconds", e.seconds, 3)
                                 .text();
    std::printf("%s\n", line.c_str());
    return 0;
  }

  const Classification c = evaluator.classify(data);
  const size_t classes = size_t(c.classes);
  for (size_t i = 0; i < c.samples; ++i) {
    const int32_t best = c.predicted[i];
    const float probability = c.probabilities[i * classes + size_t(best)];
    if (!o.json) {
      std::printf("%s\t%d\t%.4f\n", o.images[i].c_str(), best, double(probability));
      continue;
    }
    json::Array probabilities;
    for (size_t k = 0; k < classes; ++k)
      probabilities.fixed(double(c.probabilities[i * classes + k]), 6);
    const std::string line = json::Object()
                                 .string("file", o.images[i])
                                 .integer("class", best)
                                 .fixed("probability", double(probability), 6)
                                 .array("probabilities", probabilities)
                                 .string("math", o.math)
                                 .text();
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  fix_blas_core("infer", argv);
  return run_program("infer", [&] {
    bool run_it = false;
    const Options options = parse_options(argc, argv, &run_it);
    if (!run_it) return 0;
    prepare_run(options.math);
    return run(options);
  });
}
