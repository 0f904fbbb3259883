// The `auto` chooser on cost tables with made-up numbers: a much faster GPU keeps layers whole on
// it, equal sides split near half, dear copies keep layers whole, ties go to the simpler plan, and
// a machine without CUDA workers gets all-CPU plans whatever the costs.
#include "partition/auto_plan.h"

#include "model/nn/conv_layer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace starcnn {
namespace {

// Every conv task costs overhead + per_filter * filters * samples / batch on one worker of a
// side (whatever the op): per_filter is one filter over a whole batch of `batch` samples. A merge
// or split costs `merge`, a copy `per_byte` * bytes.
struct LinearCosts : CostTable {
  double cpu_per_filter = 1, cuda_per_filter = 1, cpu_overhead = 0, cuda_overhead = 0;
  double merge = 0, split = 0, per_byte = 0, batch = 64;
  double conv_us(ConvOp, const Conv2dShape &shape, bool, Side side) const override {
    const double work = double(shape.c_out) * double(shape.n) / batch;
    return side == Side::cpu ? cpu_overhead + cpu_per_filter * work
                             : cuda_overhead + cuda_per_filter * work;
  }
  double merge_us(const MergeShape &, bool is_split, Side) const override {
    return is_split ? split : merge;
  }
  double transfer_us(size_t bytes, Side from, Side to) const override {
    EXPECT_NE(from, to);
    return per_byte * double(bytes);
  }
};

// Knows nothing.
struct NoCosts : CostTable {
  double conv_us(ConvOp, const Conv2dShape &, bool, Side) const override { return nan(); }
  double merge_us(const MergeShape &, bool, Side) const override { return nan(); }
  double transfer_us(size_t, Side, Side) const override { return nan(); }
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
};

// lenet's convolutions at batch 64: 3x32x32 -> 6 (5x5), then 6x14x14 -> 16 (5x5).
std::vector<AutoLayer> lenet_layers() {
  return {{"conv1", Conv2dShape{64, 3, 32, 32, 6, 5, 1, 0}, false, {}},
          {"conv2", Conv2dShape{64, 6, 14, 14, 16, 5, 1, 0}, true, {}}};
}

bool one_sided(const SplitPlan &plan) {
  const int cpu = cpu_filters(plan);
  return cpu == 0 || cpu == plan.filters();
}

TEST(AutoPlan, CandidatesRunFromAllCudaToAllCpu) {
  const std::vector<SplitPlan> plans = auto_candidates(6, {4, 1});
  ASSERT_EQ(plans.size(), 7u);
  EXPECT_EQ(plans[0].describe(), "6@cuda");
  EXPECT_EQ(plans[1].describe(), "6@cpu/4");
  for (int k = 1; k <= 5; ++k)
    EXPECT_EQ(plans[size_t(k) + 1].describe(),
              std::to_string(k) + "@cpu/4," + std::to_string(6 - k) + "@cuda");
}

TEST(AutoPlan, CandidatesOfWideLayersAreAnEvenGrid) {
  const std::vector<SplitPlan> plans = auto_candidates(256, {15, 1}, 18);
  ASSERT_EQ(plans.size(), 18u);
  int last = 0;
  for (size_t i = 2; i < plans.size(); ++i) {
    const int cpu = cpu_filters(plans[i]);
    EXPECT_GT(cpu, last);
    EXPECT_LT(cpu, 256);
    last = cpu;
  }
  EXPECT_GT(last, 230);
}

TEST(AutoPlan, WithoutCudaWorkersTheOnlyCandidateIsAllCpu) {
  const std::vector<SplitPlan> plans = auto_candidates(16, {2, 0});
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].describe(), "16@cpu/2");
  const std::vector<SplitPlan> gpu_only = auto_candidates(16, {0, 1});
  ASSERT_EQ(gpu_only.size(), 1u);
  EXPECT_EQ(gpu_only[0].describe(), "16@cuda");
}

TEST(AutoPlan, WithoutCudaWorkersEveryLayerIsAllCpuEvenUnpredicted) {
  const NoCosts none;
  const MissingCosts missing(none);
  const std::vector<AutoChoice> choices = choose_auto_plans(lenet_layers(), {2, 0}, missing);
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[0].plan.describe(), "6@cpu/2");
  EXPECT_EQ(choices[1].plan.describe(), "16@cpu/2");
  EXPECT_TRUE(std::isnan(choices[0].predicted_us));
  // What the caller would calibrate: the CPU tasks, each layer's 6 or 16 filters on a block of
  // 32 samples (64 cut for 2 workers), and their merges.
  EXPECT_FALSE(missing.convs().empty());
  for (const MissingCosts::Conv &c : missing.convs()) {
    EXPECT_EQ(c.side, Side::cpu);
    EXPECT_TRUE(c.shape.c_out == 6 || c.shape.c_out == 16) << c.shape.c_out;
    EXPECT_EQ(c.shape.n, 32u);
  }
  EXPECT_EQ(missing.merges().size(), 4u);  // merge and split of each layer
}

TEST(AutoPlan, WithoutCudaWorkersTheCostsChangeNothing) {
  LinearCosts costs;
  costs.cpu_per_filter = 1000;
  const std::vector<AutoChoice> choices = choose_auto_plans(lenet_layers(), {2, 0}, costs);
  for (const AutoChoice &c : choices) EXPECT_EQ(cpu_filters(c.plan), c.plan.filters());
}

TEST(AutoPlan, SeveralCandidatesAndNoPredictionIsAnError) {
  const NoCosts none;
  EXPECT_THROW(choose_auto_plans(lenet_layers(), {4, 1}, none), std::runtime_error);
}

TEST(AutoPlan, AGpuTwentyTimesFasterThanAllCpuWorkersKeepsEveryLayerWholeOnIt) {
  LinearCosts costs;
  costs.cpu_per_filter = 80;  // 4 workers: the CPU side does a filter in 20, the GPU in 1
  costs.cuda_per_filter = 1;
  const std::vector<AutoChoice> choices = choose_auto_plans(lenet_layers(), {4, 1}, costs);
  ASSERT_EQ(choices.size(), 2u);
  for (const AutoChoice &c : choices)
    EXPECT_EQ(c.plan.describe(), std::to_string(c.plan.filters()) + "@cuda");
}

TEST(AutoPlan, EqualSidesAndFreeCopiesSplitNearHalf) {
  LinearCosts costs;
  costs.cpu_per_filter = 4;  // 4 workers: as fast together as the GPU
  costs.cuda_per_filter = 1;
  const std::vector<AutoLayer> layers = {
      {"conv", Conv2dShape{64, 32, 16, 16, 64, 3, 1, 1}, true, {}}};
  const std::vector<AutoChoice> choices = choose_auto_plans(layers, {4, 1}, costs);
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_NEAR(cpu_filters(choices[0].plan), 32, 4) << choices[0].plan.describe();
  // Half the work on each side: about half the time of all on one side (3 ops x 64 filters).
  EXPECT_NEAR(choices[0].predicted_us, 96.0, 8.0);
}

TEST(AutoPlan, DearCopiesKeepEveryLayerOnOneSide) {
  LinearCosts costs;
  costs.cpu_per_filter = 4;
  costs.cuda_per_filter = 1;
  costs.per_byte = 1.0;  // a copy of a 64-sample activation costs far more than any compute
  const std::vector<AutoChoice> choices = choose_auto_plans(lenet_layers(), {4, 1}, costs);
  for (const AutoChoice &c : choices) EXPECT_TRUE(one_sided(c.plan)) << c.plan.describe();
  // The input is in host memory, so the cheapest is to stay there.
  for (const AutoChoice &c : choices) EXPECT_EQ(cpu_filters(c.plan), c.plan.filters());
}

TEST(AutoPlan, TiesGoToTheWholeCudaPlan) {
  const LinearCosts free_everything = [] {
    LinearCosts c;
    c.cpu_per_filter = c.cuda_per_filter = 0;
    return c;
  }();
  for (const AutoChoice &c : choose_auto_plans(lenet_layers(), {4, 1}, free_everything))
    EXPECT_EQ(c.plan.describe(), std::to_string(c.plan.filters()) + "@cuda");
  // One worker a side, same speed, free copies: all-CPU, all-CUDA and half/half cost the same
  // per side, and the split's penalty leaves the whole CUDA plan.
  LinearCosts same;
  same.batch = 8;
  same.cpu_per_filter = same.cuda_per_filter = 1;
  same.merge = same.split = 0;
  AutoPlanOptions no_penalty;
  no_penalty.min_gain = 0;
  const std::vector<AutoLayer> one = {{"conv", Conv2dShape{8, 4, 8, 8, 4, 3, 1, 1}, true, {}}};
  const std::vector<AutoChoice> choices = choose_auto_plans(one, {1, 1}, same, no_penalty);
  // Half/half takes 2 per op against 4: a real gain, so it is taken without a penalty...
  EXPECT_EQ(cpu_filters(choices[0].plan), 2) << choices[0].plan.describe();
  // ...and an exact tie between a split and a whole plan keeps the whole one.
  same.merge = 6;  // merge + split eat the 6 us the split saves (3 ops x 2)
  same.split = 0;
  const std::vector<AutoChoice> tied = choose_auto_plans(one, {1, 1}, same, no_penalty);
  EXPECT_EQ(tied[0].plan.describe(), "4@cuda");
  EXPECT_DOUBLE_EQ(tied[0].predicted_us, 12.0);
}

TEST(AutoPlan, ASplitMustBeatTheWholePlanByTheMinimumGain) {
  LinearCosts costs;
  costs.batch = 8;
  costs.cpu_per_filter = costs.cuda_per_filter = 1;
  const std::vector<AutoLayer> one = {{"conv", Conv2dShape{8, 4, 8, 8, 4, 3, 1, 1}, true, {}}};
  costs.merge = 5.5;  // the split saves 6 - 5.5 = 0.5 of 12: about 4%
  AutoPlanOptions options;
  options.min_gain = 0.10;
  EXPECT_EQ(choose_auto_plans(one, {1, 1}, costs, options)[0].plan.describe(), "4@cuda");
  options.min_gain = 0.01;
  EXPECT_EQ(cpu_filters(choose_auto_plans(one, {1, 1}, costs, options)[0].plan), 2);
}

TEST(AutoPlan, LayerTimeAddsCopiesComputeAndMergeAsDocumented) {
  LinearCosts costs;
  costs.cpu_per_filter = 10;
  costs.cuda_per_filter = 1;
  costs.cuda_overhead = 2;
  costs.merge = 5;
  costs.split = 7;
  costs.per_byte = 0.001;
  costs.batch = 1;
  // X: 1x1x10x10 = 400 bytes; Y: 8x8 per filter; the CPU's 2 filters are one task (2 tasks asked
  // for, but one sample cannot be cut).
  const AutoLayer layer{"conv", Conv2dShape{1, 1, 10, 10, 4, 3, 1, 0}, true, {}};
  const SplitPlan plan = parse_split_plan("cpu:2", 4, {2, 1});
  Side out = Side::cpu;
  const double us = predict_layer_us(layer, plan, Side::cuda, {2, 1}, costs, &out);
  EXPECT_EQ(out, Side::cuda);
  // forward  max(CPU: X in 0.4 + 20 + Y out 0.512, CUDA: 2 + 2) = 20.912
  // backward max(CPU: dY in 0.512 + 2 tasks of 20 on 2 workers 20 + dX out 0.4, CUDA: 4 + 4)
  // merge 5 + split 7
  EXPECT_NEAR(us, 20.912 + 20.912 + 12.0, 1e-9);
}

TEST(AutoPlan, AnUnknownCopyMakesThePlanUnknown) {
  LinearCosts costs;
  costs.per_byte = std::numeric_limits<double>::quiet_NaN();
  const AutoLayer layer{"conv", Conv2dShape{1, 1, 10, 10, 4, 3, 1, 0}, true, {}};
  const MachineWorkers machine{2, 1};
  EXPECT_TRUE(std::isnan(predict_layer_us(layer, parse_split_plan("cpu:2", 4, machine), Side::cuda,
                                          machine, costs, nullptr)));
  EXPECT_TRUE(std::isfinite(predict_layer_us(layer, parse_split_plan("4@cuda", 4, machine),
                                             Side::cuda, machine, costs, nullptr)));
}

TEST(AutoPlan, FixedLayersKeepTheirPlanAndSetWhereTheNextInputLives) {
  LinearCosts costs;
  costs.cpu_per_filter = 4;
  costs.cuda_per_filter = 1;
  costs.per_byte = 1.0;
  std::vector<AutoLayer> layers = lenet_layers();
  layers[0].fixed = {parse_split_plan("6@cuda", 6, {4, 1})};
  const std::vector<AutoChoice> choices = choose_auto_plans(layers, {4, 1}, costs);
  EXPECT_EQ(choices[0].plan.describe(), "6@cuda");
  EXPECT_EQ(choices[1].input_side, Side::cuda);
  EXPECT_EQ(choices[1].plan.describe(), "16@cuda");  // copies back to the host cost too much
}

// Every plan's tasks tile the layer's output exactly once: each part's filters over every sample,
// a part of T tasks cut into min(T, n) sample blocks of sizes that differ by one at most.
TEST(AutoPlan, PartTasksTileTheOutputBySamples) {
  const MachineWorkers machine{4, 1};
  for (uint32_t n : {1u, 3u, 10u}) {
    for (const char *text : {"none", "even:3", "cpu:6", "cpu:3", "5@cpu/2,3@cuda,1@any/7"}) {
      SCOPED_TRACE(std::string(text) + " n=" + std::to_string(n));
      const SplitPlan plan = parse_split_plan(text, 9, machine);
      const std::vector<PartTask> tasks = part_tasks(plan, n);
      std::vector<std::vector<int>> covered(9, std::vector<int>(n, 0));
      size_t expected_tasks = 0;
      for (const SplitPart &part : plan.parts)
        expected_tasks += std::min<size_t>(size_t(part.tasks), n);
      ASSERT_EQ(tasks.size(), expected_tasks);
      for (const PartTask &t : tasks) {
        const SplitPart &part = plan.parts[t.part];
        EXPECT_EQ(t.filters, part.filters);
        EXPECT_EQ(t.where, part.where);
        const uint32_t blocks = std::min<uint32_t>(uint32_t(part.tasks), n);
        EXPECT_TRUE(t.samples == n / blocks || t.samples == n / blocks + 1) << t.samples;
        for (int c = t.first_channel; c < t.first_channel + t.filters; ++c)
          for (uint32_t i = t.first_sample; i < t.first_sample + t.samples; ++i) ++covered[c][i];
      }
      for (const auto &channel : covered)
        for (int count : channel) ASSERT_EQ(count, 1);
      if (tasks.size() > 1) {
        const MergeShape merge = merge_shape_of(tasks, n, 4, 9);
        EXPECT_EQ(merge.parts, tasks.size());
      }
    }
  }
}

}  // namespace
}  // namespace starcnn
