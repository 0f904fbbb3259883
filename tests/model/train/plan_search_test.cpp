// The plan text of the measured search's "filters across GPUs" candidate, read back by the plan
// parser: every conv's filters in parts that sum to the layer's, one part per device (at most
// one per filter), sizes within one of each other, each pinned to its own CUDA device. And which
// plans leave the CPU workers idle (auto then restarts StarPU with one). And the sample splits the
// search measures, and when a plan restarts StarPU.
#include "model/train/plan_search.h"

#include "codelets/support/codelet_support.h"
#include "model/nn/network_spec.h"
#include "tests/support/scoped_env.h"

#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
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
// Random batches and step times: three shares in 1 .. batch - 1, in increasing order, the middle
// one the balance batch * gpu / (gpu + cpu) rounded, the others on either side of it.
TEST(SampleShares, FirstThreeAroundTheBalance) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t batch = std::uniform_int_distribution<size_t>(8, 1024)(gen);
    const double gpu = std::uniform_real_distribution<double>(0.1, 10)(gen);
    const double cpu = std::uniform_real_distribution<double>(0.1, 10)(gen);
    const double balance = double(batch) * gpu / (gpu + cpu);
    SCOPED_TRACE("batch " + std::to_string(batch) + ", balance " + std::to_string(balance));
    const std::vector<size_t> shares = first_sample_shares(batch, gpu, cpu);
    ASSERT_FALSE(shares.empty());
    for (size_t i = 0; i < shares.size(); ++i) {
      EXPECT_GE(shares[i], 1u);
      EXPECT_LE(shares[i], batch - 1);
      if (i > 0) {
        EXPECT_LT(shares[i - 1], shares[i]);
      }
    }
    if (shares.size() == 3) {
      EXPECT_LE(std::abs(double(shares[1]) - balance), 0.5);
      EXPECT_LE(double(shares[0]), balance);
      EXPECT_GE(double(shares[2]), balance);
    }
  }
}

// Random measured steps: the next shares lie halfway (within rounding) between the fastest and
// its neighbours, or as far outwards from an end as the middle share lies inwards; never a share
// already measured, never outside the batch.
TEST(SampleShares, NextHalfwayFromTheFastest) {
  std::mt19937 gen(11);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t batch = std::uniform_int_distribution<size_t>(8, 512)(gen);
    std::set<size_t> picked;
    while (picked.size() < 3)
      picked.insert(std::uniform_int_distribution<size_t>(1, batch - 1)(gen));
    const std::vector<size_t> shares(picked.begin(), picked.end());
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) ms.push_back(std::uniform_real_distribution<double>(1, 5)(gen));
    const size_t best = size_t(std::min_element(ms.begin(), ms.end()) - ms.begin());
    SCOPED_TRACE("batch " + std::to_string(batch) + ", shares " + std::to_string(shares[0]) + " " +
                 std::to_string(shares[1]) + " " + std::to_string(shares[2]) + ", fastest " +
                 std::to_string(best));
    const double k = double(shares[best]), middle = double(shares[1]);
    const double lower = best > 0 ? double(shares[best - 1]) : 2 * k - middle;
    const double upper = best < 2 ? double(shares[best + 1]) : 2 * k - middle;
    const std::vector<size_t> next = next_sample_shares(shares, ms, batch);
    EXPECT_LE(next.size(), 2u);
    for (size_t n : next) {
      EXPECT_GE(n, 1u);
      EXPECT_LE(n, batch - 1);
      EXPECT_EQ(std::count(shares.begin(), shares.end(), n), 0);
      const double want_low = std::clamp((k + lower) / 2, 1.0, double(batch - 1));
      const double want_high = std::clamp((k + upper) / 2, 1.0, double(batch - 1));
      EXPECT_TRUE(std::abs(double(n) - want_low) <= 1 || std::abs(double(n) - want_high) <= 1)
          << n << " is not halfway to " << lower << " or " << upper;
    }
    if (next.size() == 2) {
      EXPECT_NE(next[0], next[1]);
    }
    // Both halves are new wherever the fastest is at least 2 from its neighbours and the ends.
    if (best == 1 && shares[1] - shares[0] >= 2 && shares[2] - shares[1] >= 2) {
      EXPECT_EQ(next.size(), 2u);
    }
  }
}

TEST(SampleShares, NoneWithoutThreeSharesOrAFiniteStep) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(next_sample_shares({10, 20}, {1, 2}, 64).empty());
  EXPECT_TRUE(next_sample_shares({10, 20, 30}, {inf, inf, inf}, 64).empty());
  EXPECT_FALSE(next_sample_shares({10, 20, 30}, {inf, 1, inf}, 64).empty());
}

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

// A plan that keeps every CPU worker restarts StarPU only after a search (or with parking's
// contexts left); the restarted StarPU runs.
TEST(RestartForPlan, AfterASearchWhateverThePlan) {
  const NetworkSpec lenet = load_network("lenet");
  const RuntimeOptions options{"", "eager", 0, nullptr, nullptr, -1};
  std::optional<Runtime> runtime;
  runtime.emplace(options);
  EXPECT_FALSE(restart_for_plan(runtime, options, lenet, "cpu"));
  EXPECT_FALSE(restart_for_plan(runtime, options, lenet, "cpu", false));
  ASSERT_TRUE(restart_for_plan(runtime, options, lenet, "cpu", true));
  ASSERT_TRUE(runtime.has_value());
  EXPECT_GE(runtime->workers().cpu, 1);
  EXPECT_EQ(runtime->workers().cuda, 0);
  EXPECT_EQ(int(starpu_cpu_worker_get_count()), runtime->workers().cpu);
}

}  // namespace
}  // namespace starcnn
