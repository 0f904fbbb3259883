// `auto` on a machine without CUDA workers: every layer all-CPU, predicted from perf models that
// the resolution calibrated itself, and a second resolution finds nothing left to calibrate.
#include "model/train/plan_calibration.h"

#include "model/nn/network_spec.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <cmath>

namespace starcnn {
namespace {

TEST(AutoPlanning, WithoutCudaWorkersEveryConvIsAllCpuAndPredicted) {
  testing::StarpuRuntime runtime("dmda", 0);
  ASSERT_TRUE(runtime.started());
  const MachineWorkers workers{int(starpu_cpu_worker_get_count()), 0};
  const NetworkSpec spec = load_network("lenet");
  const NetworkPlanText plans = parse_network_plan("auto");
  ASSERT_TRUE(uses_auto_plan(spec, plans));
  const AutoPlanning first = resolve_auto_plans(spec, plans, workers, 5);
  ASSERT_EQ(first.choices.size(), 2u);
  for (const AutoChoice &c : first.choices) {
    EXPECT_EQ(cpu_filters(c.plan), c.plan.filters()) << c.plan.describe();
    EXPECT_TRUE(std::isfinite(c.predicted_us)) << c.layer;
    EXPECT_GT(c.predicted_us, 0.0) << c.layer;
  }
  EXPECT_EQ(first.plans.plan_for("conv1"), first.choices[0].plan.describe());
  EXPECT_EQ(first.plans.plan_for("conv2"), first.choices[1].plan.describe());
  const AutoPlanning second = resolve_auto_plans(spec, plans, workers, 5);
  EXPECT_EQ(second.calibration_tasks, 0u);
  EXPECT_EQ(second.plans.plan_for("conv2"), first.plans.plan_for("conv2"));
}

TEST(AutoPlanning, LayersNotPlannedAutoKeepTheirPlan) {
  testing::StarpuRuntime runtime("dmda", 0);
  ASSERT_TRUE(runtime.started());
  const MachineWorkers workers{int(starpu_cpu_worker_get_count()), 0};
  const NetworkSpec spec = load_network("lenet");
  const AutoPlanning planning =
      resolve_auto_plans(spec, parse_network_plan("auto;conv1=even:2"), workers, 5);
  EXPECT_EQ(planning.plans.plan_for("conv1"), "3@any,3@any");
  EXPECT_FALSE(planning.chosen[0]);
  EXPECT_TRUE(planning.chosen[1]);
  EXPECT_FALSE(uses_auto_plan(spec, parse_network_plan("none")));
}

}  // namespace
}  // namespace starcnn
