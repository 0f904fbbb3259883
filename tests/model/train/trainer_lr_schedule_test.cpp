// The learning-rate schedule: cosine annealing from lr to zero (lr_at against the formula), and
// the SGD steps really use it: annealed to zero after the first step, five steps leave the weights
// where one step put them.
#include "model/data/dataset.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/train/trainer.h"
#include "tests/support/small_dataset.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

namespace starcnn {
namespace {

Dataset small_dataset() {
  return testing::small_dataset(20, 1, 8, 8, 3, 53);  // 5 steps of 4
}

std::vector<NamedTensor> weights_after(int64_t max_steps, int64_t anneal_steps) {
  const NetworkSpec spec =
      parse_network("input 1 8 8\nconv 2 3\nrelu\nmaxpool 2\nflatten\nlinear 3\n", "tiny.net");
  const Dataset data = small_dataset();
  ParameterSet params(spec, parse_network_plan("none"), {int(starpu_cpu_worker_get_count()), 0});
  params.initialize(3);
  TrainConfig config;
  config.batch = 4;
  config.lr = 0.1f;
  config.max_steps = max_steps;
  Trainer trainer(spec, params, data, config);
  if (anneal_steps > 0) trainer.anneal_lr_until(anneal_steps);
  const std::atomic<bool> stop{false};
  trainer.train_epoch(0, nullptr, stop);
  return params.read(false);
}

TEST(TrainerLrSchedule, CosineGoesFromLrToZero) {
  testing::StarpuRuntime runtime("eager", 0);
  ASSERT_TRUE(runtime.started());
  const NetworkSpec spec = parse_network("input 1 8 8\nflatten\nlinear 3\n", "flat.net");
  const Dataset data = small_dataset();
  ParameterSet params(spec, parse_network_plan("none"), {1, 0});
  TrainConfig config;
  config.batch = 4;
  config.lr = 0.2f;
  Trainer trainer(spec, params, data, config);
  EXPECT_FLOAT_EQ(trainer.lr_at(0), 0.2f);
  EXPECT_FLOAT_EQ(trainer.lr_at(1000), 0.2f) << "constant without a schedule";
  trainer.anneal_lr_until(100);
  EXPECT_FLOAT_EQ(trainer.lr_at(0), 0.2f);
  EXPECT_NEAR(trainer.lr_at(50), 0.1f, 1e-7);
  EXPECT_NEAR(trainer.lr_at(25), 0.1 * (1 + std::cos(M_PI / 4)), 1e-7);
  EXPECT_NEAR(trainer.lr_at(100), 0.0f, 1e-9);
  EXPECT_NEAR(trainer.lr_at(150), 0.0f, 1e-9) << "past the end it stays at zero";
}

TEST(TrainerLrSchedule, StepsAfterTheScheduleEndsMoveNoWeight) {
  testing::StarpuRuntime runtime("dmda", 0);
  ASSERT_TRUE(runtime.started());
  const std::vector<NamedTensor> one = weights_after(1, 1), five = weights_after(5, 1);
  const std::vector<NamedTensor> five_constant = weights_after(5, 0);
  bool constant_moved_on = false;
  for (size_t t = 0; t < one.size(); ++t) {
    EXPECT_EQ(five[t].values, one[t].values) << one[t].name;
    constant_moved_on = constant_moved_on || five_constant[t].values != one[t].values;
  }
  EXPECT_TRUE(constant_moved_on) << "without the schedule the later steps must train";
}

}  // namespace
}  // namespace starcnn
