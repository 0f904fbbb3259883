// Trainer with micro-batches: a step cut into micro-batches (each through its own copy of the
// activations, gradients summed with STARPU_REDUX, the loss averaged over the whole batch) is the
// same step as the whole batch's. Trained side by side from the same weights on the same data,
// with unequal micro-batches and split convolutions, both end with the same weights, momentum
// buffers and losses to float32 rounding.
#include "model/data/dataset.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/train/trainer.h"
#include "tests/support/scheduler_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace starcnn {
namespace {

class TrainerMicroBatchesTest : public testing::CpuSchedulerTest {};

Dataset random_dataset(size_t count) {
  std::mt19937 gen(7);
  std::vector<uint8_t> pixels(count * 144), labels(count);
  for (uint8_t &p : pixels) p = uint8_t(gen() % 256);
  for (uint8_t &l : labels) l = uint8_t(gen() % 5);
  Preprocess pre;
  pre.mean = {0.5f};
  pre.stddev = {0.3f};
  return make_dataset(pixels.data(), labels.data(), count, 1, 12, 12, 5, pre);
}

struct TrainedRun {
  std::vector<NamedTensor> weights, momenta;
  std::vector<double> losses;
  size_t micro_batches = 0;
};

TrainedRun train(const NetworkSpec &spec, const Dataset &data, const std::string &plan, int micro) {
  ParameterSet params(spec, parse_network_plan(plan), {int(starpu_cpu_worker_get_count()), 0});
  params.initialize(5);
  TrainConfig config;
  config.batch = 8;
  config.lr = 0.05f;
  config.log_every = 1;
  config.micro_batches = micro;
  Trainer trainer(spec, params, data, config);
  TrainedRun run;
  run.micro_batches = trainer.micro_batches();
  const std::atomic<bool> stop{false};
  for (size_t epoch = 0; epoch < 2; ++epoch)
    trainer.train_epoch(
        epoch, [&](const Progress &p) { run.losses.push_back(p.loss); }, stop);
  run.weights = params.read(false);
  run.momenta = params.read(true);
  return run;
}

double max_abs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

TEST_P(TrainerMicroBatchesTest, MicroBatchesTrainLikeTheWholeBatch) {
  const NetworkSpec spec = parse_network(
      "input 1 12 12\nconv 4 3\nrelu\nmaxpool 2\nconv 6 3 pad=1\nrelu\nflatten\nlinear 5\n",
      "micro.net");
  const Dataset data = random_dataset(40);  // 5 steps of 8 per epoch
  const TrainedRun whole = train(spec, data, "none", 1);
  const TrainedRun micro =
      train(spec, data, "none;conv2=2@cpu,4@any", 3);  // micro-batches of 3, 3, 2
  ASSERT_EQ(whole.micro_batches, 1u);
  ASSERT_EQ(micro.micro_batches, 3u);

  ASSERT_EQ(micro.losses.size(), whole.losses.size());
  ASSERT_EQ(whole.losses.size(), 10u);
  for (size_t s = 0; s < whole.losses.size(); ++s)
    EXPECT_NEAR(micro.losses[s], whole.losses[s], 1e-5 * std::fabs(whole.losses[s]))
        << "step " << s;

  ParameterSet start(spec, parse_network_plan("none"), {1, 0});
  start.initialize(5);
  const std::vector<NamedTensor> initial = start.read(false);
  for (size_t t = 0; t < whole.weights.size(); ++t) {
    SCOPED_TRACE(whole.weights[t].name);
    const std::vector<float> &w = whole.weights[t].values, &m = micro.weights[t].values;
    ASSERT_EQ(m.size(), w.size());
    std::vector<float> change(w.size());
    for (size_t j = 0; j < w.size(); ++j) change[j] = w[j] - initial[t].values[j];
    const double moved = max_abs(change);
    ASSERT_GT(moved, 0.0) << "training moved no weight";
    const double tolerance = 1e-4 * moved + 4 * 1.2e-7 * max_abs(w);
    for (size_t j = 0; j < w.size(); ++j) ASSERT_NEAR(m[j], w[j], tolerance) << "element " << j;
    const std::vector<float> &wm = whole.momenta[t].values, &mm = micro.momenta[t].values;
    for (size_t j = 0; j < wm.size(); ++j)
      ASSERT_NEAR(mm[j], wm[j], 1e-4 * max_abs(wm) + 1e-7) << "momentum element " << j;
  }
}

TEST(TrainerMicroBatches, MoreMicroBatchesThanSamplesIsRefused) {
  testing::StarpuRuntime runtime("eager", 0);
  ASSERT_TRUE(runtime.started());
  const NetworkSpec spec = parse_network("input 1 12 12\nflatten\nlinear 5\n", "flat.net");
  const Dataset data = random_dataset(16);
  ParameterSet params(spec, parse_network_plan("none"), {1, 0});
  TrainConfig config;
  config.batch = 4;
  config.micro_batches = 5;
  EXPECT_THROW(Trainer(spec, params, data, config), std::invalid_argument);
  config.micro_batches = 0;
  EXPECT_THROW(Trainer(spec, params, data, config), std::invalid_argument);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(TrainerMicroBatchesTest);

}  // namespace
}  // namespace starcnn
