// Trainer's max_steps: training stops after that many steps over all epochs; the epoch it stops
// in reports the steps it ran and is not marked interrupted, and later epochs run no step.
#include "model/data/dataset.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/train/trainer.h"
#include "tests/support/small_dataset.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace starcnn {
namespace {

TEST(TrainerMaxSteps, StopsAfterMaxStepsOverEpochs) {
  testing::StarpuRuntime runtime("eager", 0);
  ASSERT_TRUE(runtime.started());
  const NetworkSpec spec =
      parse_network("input 1 8 8\nconv 2 3\nrelu\nmaxpool 2\nflatten\nlinear 3\n", "tiny.net");
  const Dataset data = testing::small_dataset(40, 1, 8, 8, 3, 37);  // 10 steps of 4 per epoch
  ParameterSet params(spec, parse_network_plan("none"), {int(starpu_cpu_worker_get_count()), 0});
  params.initialize(1);
  TrainConfig config;
  config.batch = 4;
  config.lr = 0.01f;
  config.max_steps = 13;
  Trainer trainer(spec, params, data, config);
  const std::atomic<bool> stop{false};

  const EpochSummary first = trainer.train_epoch(0, nullptr, stop);
  EXPECT_EQ(first.batches, 10u);
  EXPECT_EQ(first.steps, 10u);
  EXPECT_FALSE(first.interrupted);
  EXPECT_FALSE(trainer.reached_max_steps());

  const EpochSummary second = trainer.train_epoch(1, nullptr, stop);
  EXPECT_EQ(second.steps, 3u);
  EXPECT_FALSE(second.interrupted);
  EXPECT_TRUE(trainer.reached_max_steps());
  EXPECT_EQ(trainer.step(), 13);
  EXPECT_GT(second.train_loss, 0.0);  // the last, partial window of steps was read

  const EpochSummary third = trainer.train_epoch(2, nullptr, stop);
  EXPECT_EQ(third.steps, 0u);
  EXPECT_EQ(trainer.step(), 13);
}

}  // namespace
}  // namespace starcnn
