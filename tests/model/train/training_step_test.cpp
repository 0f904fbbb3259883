// Whole training steps of LeNet as StarPU task flows, on CPU workers under several schedulers:
// - one and three steps of a split network (unequal filter parts, some held to the CPU) and three
// of
//   a whole one against the float64 reference of lenet_reference.h: loss, correct count, momentum
//   buffers and parameters;
// - several steps of a split and a whole network from the same weights end at the same weights
//   (lenet, and a small network with the layer kinds lenet lacks);
// - three steps of lenet as one task a step on a CPU worker (LayerChain), with and without each
//   step's update folded into the next step's task, against the float64 reference, and the two
//   against each other.
#include "codelets/accumulate.h"
#include "model/nn/network.h"
#include "model/nn/parameter_set.h"
#include "tests/support/lenet_reference.h"
#include "tests/support/random_data.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

namespace starcnn {
namespace {

namespace ref = testing::lenet;

// conv1 (6 filters): 2 | 1 on the CPU | 3; conv2 (16): 5 | 11 on the CPU, which parts_of() cuts
// further into one part per CPU worker. Unequal parts, mixed placement.
const char kSplitPlan[] = "2@any,1@cpu,3@any;conv2=5@any,11@cpu";
const float kLr = 0.1f, kMomentum = 0.9f, kWeightDecay = 5e-4f;

// Float32 against float64 (TrainingStepTest.SplitStepMatchesFloat64Reference): a gradient entry is
// a sum of up to 5 * 28 * 28 = 3920 products (conv1), after seven float32 layers. Rounding errors
// (2^-24 relative each) add up like a random walk, and entries cancel, so errors are best measured
// against the tensor's largest entry: here they stay below 5e-7 of it. 1e-4 of it leaves a wide
// margin for other BLAS kernels and sum orders, while a wrong or missing contribution (a lost
// part, a bias left out, a mis-ordered merge) moves entries by O(1) of it; a learning rate off by
// 0.1% already fails.
const double kGradientTolerance = 1e-4;
// Split against whole (both float32): they differ only in the order of sums (dX summed from parts
// through StarPU's reduction, GEMMs of other widths). After 6 steps the momentum buffers differ by
// at most 1e-6 of their largest entry and the weights by an ulp or two: 1e-5 bounds the first, and
// 1e-5 of the largest change plus 4 ulps the second. A dX summed onto the last step's fails at
// once.
const double kSplitTolerance = 1e-5;
const double kFloatUlp = 1.0 / (1 << 23);  // float32 spacing at 1

double max_abs(const std::vector<double> &v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

std::vector<double> to_double(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

std::vector<int32_t> random_labels(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(0, 9);
  std::vector<int32_t> labels(n);
  for (int32_t &l : labels) l = dist(gen);
  return labels;
}

MachineWorkers cpu_workers() {
  return {int(starpu_cpu_worker_get_count()), 0};
}

// Each element of `got` within tolerance * max|want| (+ `floor`) of `want`; reports the worst.
void expect_close(const std::string &what, const std::vector<float> &got,
                  const std::vector<double> &want, double tolerance, double floor = 0.0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double bound = tolerance * max_abs(want) + floor;
  double worst = 0.0;
  size_t at = 0;
  for (size_t j = 0; j < got.size(); ++j) {
    const double err = std::fabs(double(got[j]) - want[j]);
    if (!(err <= worst)) {
      worst = err;
      at = j;
    }
  }
  EXPECT_LE(worst, bound) << what << ": element " << at << " is " << got[at] << ", want "
                          << want[at] << " (max |want| " << max_abs(want) << ")";
}

// One batch of LeNet inputs and labels with StarPU handles, and the loss accumulator.
struct Batch {
  Batch(const NetworkSpec &spec, int n, uint32_t seed)
      : images({n, spec.input.c, spec.input.h, spec.input.w}, "images"),
        labels({n}, "labels", ElementType::i32),
        stats({int(kXentStatsSize)}, "stats") {
    set_sum_reduction(stats.handle());
    refill(seed);
  }
  void refill(uint32_t seed) {
    image_values = testing::random_floats(images.size(), seed);
    label_values = random_labels(labels.size(), seed + 1);
    images.write(image_values);
    labels.write_i32(label_values);
  }
  ref::Activation reference_images() const {
    return {size_t(images.dim(0)), size_t(images.dim(1)), size_t(images.dim(2)),
            size_t(images.dim(3)), to_double(image_values)};
  }
  Tensor images, labels, stats;
  std::vector<float> image_values;
  std::vector<int32_t> label_values;
};

// How a step's passes run: layer tasks; one task on CPU worker 0 (LayerChain); that task with
// the last step's update at its start (LayerChain::fold_update).
enum class Passes { layers, chain, folded_chain };

std::unique_ptr<Network> make_network(const NetworkSpec &spec, ParameterSet &params, int n,
                                      Passes passes) {
  if (passes == Passes::layers) return std::make_unique<Network>(spec, params, n);
  auto net =
      std::make_unique<Network>(spec, params, n, n, 0, NetworkPlacement{cpu_worker(0), true});
  if (passes == Passes::folded_chain) {
    EXPECT_TRUE(net->fold_update(params)) << "the chain does not fold the update";
  }
  return net;
}

// Submits forward, loss, backward and the SGD update; waits for nothing.
void submit_step(Network &net, ParameterSet &params, const Batch &batch, bool first_step,
                 Passes passes = Passes::layers) {
  if (passes == Passes::layers) {
    net.forward(batch.images, batch.labels, batch.stats);
    net.backward(batch.images, batch.labels);
  } else {
    net.forward_backward(batch.images, batch.labels, batch.stats);
  }
  params.submit_update({kLr, kMomentum, kWeightDecay, first_step ? 1u : 0u});
}

class TrainingStepTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    runtime_ = std::make_unique<testing::StarpuRuntime>(GetParam(), 0);
    ASSERT_EQ(runtime_->policy_name(), GetParam());
  }
  void TearDown() override { runtime_.reset(); }
  std::unique_ptr<testing::StarpuRuntime> runtime_;
};

// Trains `steps` steps of the split lenet on batches of 5, each step's batch new, and the float64
// reference alongside on the same batches; expects the same loss, correct count, momentum buffers
// and parameters.
void expect_steps_match_reference(const std::string &plan, int steps,
                                  Passes passes = Passes::layers) {
  const NetworkSpec spec = load_network("lenet");
  ParameterSet params(spec, parse_network_plan(plan), cpu_workers());
  params.initialize(2024);
  const int n = 5;
  const std::unique_ptr<Network> network = make_network(spec, params, n, passes);
  Network &net = *network;
  Batch batch(spec, n, 77);

  ref::Params want, buffers;
  for (const NamedTensor &t : params.read(false)) want.push_back(to_double(t.values));
  const ref::Params w0 = want;
  double loss_sum = 0.0;
  int correct = 0;
  for (int s = 0; s < steps; ++s) {
    if (s > 0) batch.refill(77 + 2 * uint32_t(s));  // waits for the tasks reading the last batch
    submit_step(net, params, batch, s == 0, passes);
    double step_loss = 0.0;
    int step_correct = 0;
    const ref::Params grads =
        ref::gradients(want, batch.reference_images(), batch.label_values, step_loss, step_correct);
    ref::sgd_step(want, grads, buffers, {kLr, kMomentum, kWeightDecay, s == 0});
    loss_sum += step_loss;
    correct += step_correct;
  }
  const std::vector<NamedTensor> after = params.read(false), momentum = params.read(true);
  const std::vector<float> stats = batch.stats.read();

  // The loss is a sum of 5 terms a step of a few units each: float32 keeps it to about 1e-6.
  EXPECT_NEAR(stats[0], loss_sum, 1e-5 * loss_sum) << "loss sum";
  EXPECT_EQ(stats[1], float(correct)) << "correct count";
  ASSERT_EQ(after.size(), want.size());
  for (size_t t = 0; t < want.size(); ++t) {
    SCOPED_TRACE(after[t].name);
    // The buffer is the gradient plus weight decay (after one step), or the momentum sum of those.
    expect_close("momentum buffer", momentum[t].values, buffers[t], kGradientTolerance);
    // w = w0 - lr * (sum of buffers): the change carries the gradients' error, plus one float32
    // rounding of w.
    std::vector<double> change(want[t].size());
    for (size_t j = 0; j < change.size(); ++j) change[j] = want[t][j] - w0[t][j];
    expect_close("parameter", after[t].values, want[t], 0.0,
                 kGradientTolerance * max_abs(change) + kFloatUlp * max_abs(want[t]));
  }
}

// The split plan's parameters update in two tasks a step: the parts held to the CPU, and the
// rest.
void expect_split_steps_match_reference(int steps) {
  {
    const ParameterSet split(load_network("lenet"), parse_network_plan(kSplitPlan), cpu_workers());
    ASSERT_EQ(split.conv_plan("conv1").parts.size(), 3u);
    ASSERT_GE(split.conv_plan("conv2").parts.size(), 2u);
  }
  expect_steps_match_reference(kSplitPlan, steps);
}

TEST_P(TrainingStepTest, SplitStepMatchesFloat64Reference) {
  expect_split_steps_match_reference(1);
}

// Momentum from the second step on, and gradients that must not carry over from step to step.
TEST_P(TrainingStepTest, ThreeSplitStepsMatchFloat64Reference) {
  expect_split_steps_match_reference(3);
}

// Every parameter of the network in one update task a step.
TEST_P(TrainingStepTest, ThreeWholeStepsMatchFloat64Reference) {
  expect_steps_match_reference("none", 3);
}

// A step as one task on a CPU worker, and with each step's update run at the start of the next
// step's task (the last one's by params.read): the same steps as the reference's.
TEST_P(TrainingStepTest, ChainStepsMatchFloat64Reference) {
  expect_steps_match_reference("cpu", 3, Passes::chain);
}

TEST_P(TrainingStepTest, FoldedUpdateStepsMatchFloat64Reference) {
  expect_steps_match_reference("cpu", 3, Passes::folded_chain);
}

// The folded update's float operations are the update task's, in the same order: the same
// weights and momenta to the bit, with one task a step fewer after the first; and a refill of the
// batch between the steps (which waits for the tasks reading it) changes nothing.
TEST_P(TrainingStepTest, FoldedUpdateEqualsTheUpdateTask) {
  const NetworkSpec spec = load_network("lenet");
  std::vector<NamedTensor> weights[2], momenta[2];
  uint64_t tasks[2] = {0, 0};
  for (int folded = 0; folded < 2; ++folded) {
    ParameterSet params(spec, parse_network_plan("cpu"), cpu_workers());
    params.initialize(7);
    const int n = 4, steps = 5;
    const auto net = make_network(spec, params, n, folded ? Passes::folded_chain : Passes::chain);
    Batch batch(spec, n, 300);
    for (int s = 0; s < steps; ++s) {
      if (s > 0) batch.refill(300 + uint32_t(s));
      const uint64_t before = submitted_task_count();
      submit_step(*net, params, batch, s == 0, folded ? Passes::folded_chain : Passes::chain);
      if (s > 0) tasks[folded] += submitted_task_count() - before;
    }
    weights[folded] = params.read(false);
    momenta[folded] = params.read(true);
  }
  EXPECT_EQ(tasks[1] + 4, tasks[0]) << "steps 2 to 5 each without an update task";
  ASSERT_EQ(weights[0].size(), weights[1].size());
  for (size_t t = 0; t < weights[0].size(); ++t) {
    SCOPED_TRACE(weights[0][t].name);
    EXPECT_EQ(weights[1][t].values, weights[0][t].values);
    EXPECT_EQ(momenta[1][t].values, momenta[0][t].values);
  }
}

// Trains `steps` steps of `spec` from the same weights and batches, once whole and once split by
// `plan`, and expects the same weights and momentum buffers.
void expect_split_trains_like_whole(const NetworkSpec &spec, const std::string &plan, int n,
                                    int steps) {
  ParameterSet whole(spec, parse_network_plan("none"), cpu_workers());
  ParameterSet split(spec, parse_network_plan(plan), cpu_workers());
  ASSERT_EQ(whole.get("conv2.weight").part_count(), 1u);
  ASSERT_GE(split.get("conv2.weight").part_count(), 2u);
  whole.initialize(99);
  split.initialize(99);
  const std::vector<NamedTensor> start = whole.read(false);
  Network whole_net(spec, whole, n), split_net(spec, split, n);
  Batch batch_a(spec, n, 1000), batch_b(spec, n, 1000);
  for (int s = 0; s < steps; ++s) {
    if (s > 0) {
      batch_a.refill(1000 + 2 * uint32_t(s));
      batch_b.refill(1000 + 2 * uint32_t(s));
    }
    submit_step(whole_net, whole, batch_a, s == 0);
    submit_step(split_net, split, batch_b, s == 0);
  }
  const std::vector<float> stats_whole = batch_a.stats.read(), stats_split = batch_b.stats.read();
  EXPECT_NEAR(stats_split[0], stats_whole[0], 1e-5 * stats_whole[0]) << "loss over the steps";
  EXPECT_EQ(stats_split[1], stats_whole[1]) << "correct count over the steps";

  const std::vector<NamedTensor> whole_w = whole.read(false), split_w = split.read(false);
  const std::vector<NamedTensor> whole_m = whole.read(true), split_m = split.read(true);
  for (size_t t = 0; t < whole_w.size(); ++t) {
    SCOPED_TRACE(whole_w[t].name);
    std::vector<double> change(whole_w[t].values.size());
    for (size_t j = 0; j < change.size(); ++j)
      change[j] = double(whole_w[t].values[j]) - start[t].values[j];
    ASSERT_GT(max_abs(change), 0.0) << "training moved no weight";
    // Both sides end in float32, so allow the roundings of w itself on top of the change's.
    expect_close(
        "parameter", split_w[t].values, to_double(whole_w[t].values), 0.0,
        kSplitTolerance * max_abs(change) + 4 * kFloatUlp * max_abs(to_double(whole_w[t].values)));
    expect_close("momentum buffer", split_m[t].values, to_double(whole_m[t].values),
                 kSplitTolerance);
  }
}

TEST_P(TrainingStepTest, SplitAndWholeAgreeAfterSeveralSteps) {
  expect_split_trains_like_whole(load_network("lenet"), kSplitPlan, 8, 6);
}

// The layers lenet does not have: padding, a ReLU of its own between two split convolutions (the
// second's summed dX feeds its backward) and a maxpool without ReLU, on a non-square input.
TEST_P(TrainingStepTest, SplitAndWholeAgreeWithPaddingAndUnfusedLayers) {
  const NetworkSpec spec = parse_network(
      "input 3 12 10\nconv 8 3 pad=1\nrelu\nconv 6 3 pad=1\nmaxpool 2\nflatten\nlinear 10\n",
      "padded");
  expect_split_trains_like_whole(spec, "3@any,5@cpu;conv2=even:3", 4, 3);
}

// CPU workers only: the schedulers that the training app is compared under.
INSTANTIATE_TEST_SUITE_P(Schedulers, TrainingStepTest, ::testing::Values("eager", "dmda", "dmdas"),
                         testing::scheduler_test_name);

}  // namespace
}  // namespace starcnn
