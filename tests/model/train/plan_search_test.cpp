// The plan text of the measured search's "filters across GPUs" candidate, read back by the plan
// parser: every conv's filters in parts that sum to the layer's, one part per device (at most
// one per filter), sizes within one of each other, each pinned to its own CUDA device.
#include "model/train/plan_search.h"

#include "codelets/support/codelet_support.h"
#include "model/nn/network_spec.h"

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

}  // namespace
}  // namespace starcnn
