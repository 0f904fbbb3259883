// The plan text of the measured search's "filters across GPUs" candidate, read back by the plan
// parser: every conv's filters in parts that sum to the layer's, one part per device (at most
// one per filter), sizes within one of each other, each pinned to its own CUDA device. And which
// plans leave the CPU workers idle (auto then restarts StarPU with one).
#include "model/train/plan_search.h"

#include "codelets/support/codelet_support.h"
#include "model/nn/network_spec.h"
#include "tests/support/scoped_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace starcnn {
namespace {

void expect_even_cut_over_gpus(const NetworkSpec &spec, int gpus) {
  SCOPED_TRACE(spec.source + " over " + std::to_string(gpus) + " GPUs");
  const std::string text = filters_across_gpus(spec, gpus);
  const NetworkPlanText plans = parse_network_plan(text);
  EXPECT_EQ(plans.default_plan, "cuda");
  const MachineWorkers workers{0, gpus};
  int convs = 0;
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind != LayerKind::conv) continue;
    ++convs;
    const SplitPlan plan = parse_split_plan(plans.plan_for(layer.name), layer.out, workers);
    ASSERT_EQ(plan.parts.size(), size_t(std::min(layer.out, gpus))) << layer.name;
    int sum = 0, smallest = layer.out, largest = 0;
    std::set<int> devices;
    for (const SplitPart &part : plan.parts) {
      sum += part.filters;
      smallest = std::min(smallest, part.filters);
      largest = std::max(largest, part.filters);
      EXPECT_EQ(kind_of(part.where), Where::cuda) << layer.name;
      devices.insert(device_of(part.where));
    }
    EXPECT_EQ(sum, layer.out) << layer.name;
    EXPECT_LE(largest - smallest, 1) << layer.name;
    EXPECT_GE(smallest, 1) << layer.name;
    EXPECT_EQ(devices.size(), plan.parts.size()) << layer.name << ": a device twice";
    EXPECT_EQ(*devices.begin(), 0) << layer.name;
    EXPECT_EQ(*devices.rbegin(), int(plan.parts.size()) - 1) << layer.name;
  }
  EXPECT_EQ(plans.overrides.size(), size_t(convs));
}

TEST(FiltersAcrossGpus, EveryConvCutEvenlyOverTheDevices) {
  for (const char *name : {"lenet", "wide"})
    for (int gpus : {2, 3, 4, 7, 8}) expect_even_cut_over_gpus(load_network(name), gpus);
}

TEST(FiltersAcrossGpus, AConvOfFewerFiltersThanGpusTakesOnePerDevice) {
  const NetworkSpec spec = parse_network(
      "input 1 8 8\nconv 3 3 name=narrow\nrelu\nconv 5 3\nflatten\nlinear 10\n", "narrow");
  for (int gpus : {2, 4, 8}) expect_even_cut_over_gpus(spec, gpus);
}

// Which whole-network plans leave the CPU workers nothing but batch loading (then auto restarts
// StarPU with one CPU worker): only plans whose home and every conv part are on CUDA workers.
TEST(LeavesCpuWorkersIdle, OnlyPlansWithEveryOpOnCuda) {
  const NetworkSpec lenet = load_network("lenet");
  const MachineWorkers one_gpu{4, 1}, two_gpus{4, 2};
  EXPECT_TRUE(leaves_cpu_workers_idle(lenet, "cuda", one_gpu));
  EXPECT_TRUE(leaves_cpu_workers_idle(lenet, "cuda0", two_gpus));
  EXPECT_TRUE(leaves_cpu_workers_idle(lenet, filters_across_gpus(lenet, 2), two_gpus));
  EXPECT_TRUE(leaves_cpu_workers_idle(lenet, "cuda;conv1=cuda1", two_gpus));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cpu", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "none", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "samples:8", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "samples:8/2", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda;conv1=2@cpu,4@cuda", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda;conv2=cpu:4", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda;conv1=none", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda;conv2=auto", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda;conv1=3@any,3@cuda", one_gpu));
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda;conv1=9@cuda", one_gpu));  // malformed
  EXPECT_FALSE(leaves_cpu_workers_idle(lenet, "cuda3", one_gpu));              // no such GPU
}

TEST(LeavesCpuWorkersIdle, RestartOnlyWithSeveralCpuWorkersAndAGpu) {
  const NetworkSpec lenet = load_network("lenet");
  {
    const testing::ScopedEnv ncpu("STARPU_NCPU", nullptr);
    EXPECT_EQ(cpu_workers_for_plan(lenet, "cuda", {15, 1}), 1);
    EXPECT_EQ(cpu_workers_for_plan(lenet, "cuda", {1, 1}), -1);
    EXPECT_EQ(cpu_workers_for_plan(lenet, "cuda", {15, 0}), -1);
    EXPECT_EQ(cpu_workers_for_plan(lenet, "samples:8", {15, 1}), -1);
  }
  const testing::ScopedEnv ncpu("STARPU_NCPU", "15");  // the user's count stays
  EXPECT_EQ(cpu_workers_for_plan(lenet, "cuda", {15, 1}), -1);
}

}  // namespace
}  // namespace starcnn
