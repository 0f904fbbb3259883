// The plan places every task: recorded at submission (TaskLog), the tasks of one training step
// carry exactly the worker kinds the plan gives them, for an all-CUDA plan, an all-CPU plan, a
// filter split and a sample split's CPU chain. No CUDA worker is needed: the tasks are logged,
// not run.
#include "codelets/support/task_log.h"
#include "model/nn/network.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace starcnn {
namespace {

const MachineWorkers kMachine{4, 1};  // as the plan sees it; StarPU itself runs CPU workers only

// The worker kinds each op of one step (forward, loss, backward, update) was given.
std::multimap<std::string, Where> step_tasks(const NetworkSpec &spec, const std::string &plan,
                                             std::optional<NetworkPlacement> placement = {}) {
  ParameterSet params(spec, parse_network_plan(plan), kMachine);
  Network network(spec, params, 8, 8, GradientAccess::overwrite, placement);
  Tensor images({8, spec.input.c, spec.input.h, spec.input.w}, "images");
  Tensor labels({8}, "labels", ElementType::i32);
  Tensor stats({int(kXentStatsSize)}, "stats");
  std::multimap<std::string, Where> placed;
  {
    TaskLog log;
    network.forward(images, labels, stats);
    network.backward(images, labels);
    params.submit_update({0.1f, 0.9f, 0.0f, false});
    for (const LoggedTask &t : log.tasks()) placed.emplace(t.op, t.where);
  }
  return placed;
}

class PlacementTest : public ::testing::Test {
 protected:
  testing::StarpuRuntime runtime_{"eager", 0};
  const NetworkSpec spec_ = load_network("lenet");
};

TEST_F(PlacementTest, AnAllCudaPlanMasksEveryTaskToCuda) {
  const auto tasks = step_tasks(spec_, "cuda");
  ASSERT_GT(tasks.size(), 20u);
  for (const auto &[op, where] : tasks)
    EXPECT_EQ(where, Where::cuda) << op << " on " << where_name(where);
}

TEST_F(PlacementTest, AnAllCpuPlanMasksEveryTaskToTheCpu) {
  for (const auto &[op, where] : step_tasks(spec_, "cpu"))
    EXPECT_EQ(where, Where::cpu) << op << " on " << where_name(where);
}

TEST_F(PlacementTest, AFilterSplitPlacesItsPartsAndKeepsEveryOtherOpOnCuda) {
  const auto tasks = step_tasks(spec_, "cuda;conv2=4@cpu/2,12@cuda");
  // conv2's CPU part in 2 sample blocks: forward, backward filter and backward data each, and the
  // SGD updates of its weight and bias part run where the part lives.
  int cpu_conv_tasks = 0, cpu_updates = 0, merges = 0;
  for (const auto &[op, where] : tasks) {
    const bool conv = op.rfind("conv2d_", 0) == 0, update = op.rfind("sgd", 0) == 0;
    if (where == Where::cpu && (conv || update)) {
      cpu_conv_tasks += conv;
      cpu_updates += update;
    } else {
      EXPECT_EQ(where, Where::cuda) << op << " on " << where_name(where);
    }
    merges += op == "merge" || op == "split";
  }
  EXPECT_EQ(cpu_conv_tasks, 6);
  EXPECT_EQ(cpu_updates, 2);
  EXPECT_EQ(merges, 2);
}

TEST_F(PlacementTest, ASampleSplitsCpuChainRunsEveryOpOnTheCpu) {
  const auto tasks = step_tasks(spec_, "samples:4", NetworkPlacement{Where::cpu, true});
  for (const auto &[op, where] : tasks) {
    if (op.rfind("sgd", 0) == 0)
      EXPECT_EQ(where, Where::cuda) << "weights live on CUDA";
    else
      EXPECT_EQ(where, Where::cpu) << op << " on " << where_name(where);
  }
}

TEST_F(PlacementTest, NoneLeavesEveryTaskToTheScheduler) {
  for (const auto &[op, where] : step_tasks(spec_, "none")) EXPECT_EQ(where, Where::any) << op;
}

}  // namespace
}  // namespace starcnn
