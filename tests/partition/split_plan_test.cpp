// Parsing of split plans: every form, and errors that say what is wrong.
#include "partition/split_plan.h"

#include <gtest/gtest.h>

namespace starcnn {
namespace {

const MachineWorkers kMachine{4, 1};

void expect_parts(const SplitPlan &plan, const std::vector<std::tuple<int, Where, int>> &want) {
  ASSERT_EQ(plan.parts.size(), want.size()) << plan.describe();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(plan.parts[i].filters, std::get<0>(want[i])) << "part " << i;
    EXPECT_EQ(plan.parts[i].where, std::get<1>(want[i])) << "part " << i;
    EXPECT_EQ(plan.parts[i].tasks, std::get<2>(want[i])) << "part " << i;
  }
}

std::string error_of(const std::string &text, int filters, MachineWorkers machine = kMachine) {
  try {
    parse_split_plan(text, filters, machine);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

TEST(SplitPlan, AutoIsResolvedElsewhere) {
  EXPECT_NE(error_of("auto", 6).find("perf models"), std::string::npos) << error_of("auto", 6);
  EXPECT_EQ(parse_network_plan("auto;conv2=none").plan_for("conv1"), "auto");
}

TEST(SplitPlan, NoneIsOneWholePart) {
  expect_parts(parse_split_plan("none", 6, kMachine), {{6, Where::any, 1}});
}

TEST(SplitPlan, EvenSpreadsTheRemainderOverTheFirstParts) {
  expect_parts(parse_split_plan("even:4", 10, kMachine),
               {{3, Where::any, 1}, {3, Where::any, 1}, {2, Where::any, 1}, {2, Where::any, 1}});
  expect_parts(parse_split_plan("even:6", 6, kMachine), {{1, Where::any, 1},
                                                         {1, Where::any, 1},
                                                         {1, Where::any, 1},
                                                         {1, Where::any, 1},
                                                         {1, Where::any, 1},
                                                         {1, Where::any, 1}});
}

TEST(SplitPlan, CpuShareIsCutIntoOneTaskPerCpuWorker) {
  expect_parts(parse_split_plan("cpu:2", 6, kMachine), {{2, Where::cpu, 4}, {4, Where::cuda, 1}});
  expect_parts(parse_split_plan("cpu:6", 6, kMachine), {{6, Where::cpu, 4}});
}

TEST(SplitPlan, ExplicitList) {
  expect_parts(parse_split_plan("1@cpu,2@any/3,3@cuda", 6, kMachine),
               {{1, Where::cpu, 4}, {2, Where::any, 3}, {3, Where::cuda, 1}});
  EXPECT_EQ(parse_split_plan("1@cpu/2,5@gpu", 6, kMachine).describe(), "1@cpu/2,5@cuda");
  // A CPU part of one task keeps its /1, or it would read back as one task per CPU worker.
  const SplitPlan one_task = parse_split_plan("6@cpu/1", 6, kMachine);
  EXPECT_EQ(one_task.describe(), "6@cpu/1");
  EXPECT_EQ(parse_split_plan(one_task.describe(), 6, kMachine).parts[0].tasks, 1);
}

TEST(SplitPlan, ErrorsQuoteThePlanAndSayWhy) {
  EXPECT_NE(error_of("even:0", 6).find("K must be a positive whole number"), std::string::npos);
  EXPECT_NE(error_of("even:7", 6).find("cannot cut 6 filters into 7 parts"), std::string::npos);
  EXPECT_NE(error_of("cpu:7", 6).find("only 6 filters"), std::string::npos);
  EXPECT_NE(error_of("2@cpu,3@cuda", 6).find("add up to 5 filters, the layer has 6"),
            std::string::npos);
  EXPECT_NE(error_of("3@fpga,3@cuda", 6).find("unknown worker kind 'fpga'"), std::string::npos);
  EXPECT_NE(error_of("3cpu,3@cuda", 6).find("not FILTERS@WHERE"), std::string::npos);
  EXPECT_NE(error_of("cpu:2", 6, {4, 0}).find("needs a CUDA worker"), std::string::npos);
  EXPECT_NE(error_of("bogus", 6).find("split plan 'bogus'"), std::string::npos);
}

// cudaN names one CUDA device's worker, as a part's place or a whole layer's plan; describe()
// writes it back the same way.
TEST(SplitPlan, CudaDevicesByNumber) {
  const MachineWorkers four_gpus{16, 4};
  expect_parts(parse_split_plan("4@cuda0,4@cuda1,8@cuda3", 16, four_gpus),
               {{4, cuda_device(0), 1}, {4, cuda_device(1), 1}, {8, cuda_device(3), 1}});
  expect_parts(parse_split_plan("cuda2", 16, four_gpus), {{16, cuda_device(2), 1}});
  const SplitPlan mixed = parse_split_plan("2@cpu/2,6@cuda1,8@cuda", 16, four_gpus);
  EXPECT_EQ(mixed.describe(), "2@cpu/2,6@cuda1,8@cuda");
  EXPECT_EQ(parse_split_plan(mixed.describe(), 16, four_gpus).describe(), mixed.describe());
  // The device and the kind are read apart: a pinned part is still a CUDA part.
  EXPECT_EQ(kind_of(cuda_device(5)), Where::cuda);
  EXPECT_EQ(device_of(cuda_device(5)), 5);
  EXPECT_EQ(device_of(Where::cuda), -1);
  EXPECT_EQ(device_of(Where::cpu), -1);
  EXPECT_EQ(where_mask(cuda_device(7)), (unsigned long long)STARPU_CUDA);
  // A whole-network cudaN keeps every other op on that device too.
  EXPECT_EQ(home_of(parse_network_plan("cuda1"), four_gpus), cuda_device(1));
  EXPECT_EQ(home_of(parse_network_plan("cuda1"), {16, 0}), Where::cpu);
  EXPECT_EQ(home_of(parse_network_plan("8@cuda0,8@cuda1"), four_gpus), Where::cuda);
}

TEST(SplitPlan, CudaDeviceErrorsNameTheDevice) {
  const MachineWorkers two_gpus{16, 2};
  std::string e = error_of("8@cuda0,8@cuda3", 16, two_gpus);
  EXPECT_NE(e.find("CUDA device 3 (cuda3) but StarPU found 2 CUDA workers (cuda0 to cuda1)"),
            std::string::npos)
      << e;
  e = error_of("cuda1", 16, {16, 1});
  EXPECT_NE(e.find("CUDA device 1 (cuda1) but StarPU found 1 CUDA worker (cuda0)"),
            std::string::npos)
      << e;
  e = error_of("16@cuda0", 16, {16, 0});
  EXPECT_NE(e.find("needs a CUDA worker and StarPU found none"), std::string::npos) << e;
  e = error_of("8@cuda8,8@cuda0", 16, two_gpus);
  EXPECT_NE(e.find("'cuda8': StarPU handles CUDA devices 0 to 7"), std::string::npos) << e;
  e = error_of("8@cuda99999999999,8@cuda0", 16, two_gpus);
  EXPECT_NE(e.find("StarPU handles CUDA devices 0 to 7"), std::string::npos) << e;
  e = error_of("8@cuda01,8@cuda0", 16, two_gpus);
  EXPECT_NE(e.find("without leading zeros (cuda1)"), std::string::npos) << e;
  for (const char *text : {"8@cudax,8@cuda0", "8@cuda-1,8@cuda0", "8@cuda1 ,8@cuda0",
                           "8@CUDA1,8@cuda0", "8@cuda1.5,8@cuda0"}) {
    e = error_of(text, 16, two_gpus);
    EXPECT_NE(e.find("unknown worker kind"), std::string::npos) << text << ": " << e;
    EXPECT_NE(e.find("cudaN for CUDA device N"), std::string::npos) << text << ": " << e;
  }
  EXPECT_NE(error_of("cuda7x", 16, two_gpus).find("split plan 'cuda7x'"), std::string::npos);
}

// Part sizes that would wrap int when summed (2147483647 + 2147483647 + 8 wrapped to 6 and passed
// the check) are refused by size, and a sum of many parts is computed without wrapping.
TEST(SplitPlan, HugeNumbersAreRefusedNotWrapped) {
  const std::string wrap = error_of("2147483647@any,2147483647@any,8@any", 6);
  EXPECT_NE(wrap.find("2147483647 is too large (at most 1048576)"), std::string::npos) << wrap;
  for (const char *text :
       {"99999999999@cpu", "even:4294967302", "cpu:2147483648", "1@cpu/2147483647"})
    EXPECT_NE(error_of(text, 6).find("too large"), std::string::npos)
        << text << ": " << error_of(text, 6);
  // 2100 parts of 1048576 filters: 2202009600 in all, more than int holds.
  std::string many;
  for (int i = 0; i < 2100; ++i) many += (i ? "," : "") + std::string("1048576@any");
  EXPECT_NE(error_of(many, 6).find("parts add up to 2202009600 filters"), std::string::npos);
  for (const char *text : {"+3@cpu,3@cpu", " 3@cpu,3@cpu", "3@cpu,0x3@cpu", "00@cpu,6@cpu"})
    EXPECT_NE(error_of(text, 6).find("positive whole number"), std::string::npos) << text;
}

TEST(NetworkPlan, DefaultAndOverrides) {
  const NetworkPlanText plans = parse_network_plan("even:2;conv2=cpu:4;conv3=none");
  EXPECT_EQ(plans.plan_for("conv1"), "even:2");
  EXPECT_EQ(plans.plan_for("conv2"), "cpu:4");
  EXPECT_EQ(plans.plan_for("conv3"), "none");
  EXPECT_EQ(parse_network_plan("conv1=cpu:1").plan_for("conv2"), "none");
  EXPECT_THROW(parse_network_plan("none;cpu:2"), std::invalid_argument);
}

// samples:K[/M][xB]: each field read back, and the text written again the same way.
TEST(SplitPlan, SampleSplitWithChainsAndBlocks) {
  struct Case {
    const char *text;
    int samples, chains, block;
  };
  for (const Case &c : {Case{"samples:104", 104, 0, 0}, Case{"samples:104/8", 104, 8, 0},
                        Case{"samples:104/8x4", 104, 8, 4}, Case{"samples:30x3", 30, 0, 3}}) {
    SampleSplit split;
    ASSERT_TRUE(parse_sample_split(c.text, &split)) << c.text;
    EXPECT_EQ(split.cpu_samples, c.samples) << c.text;
    EXPECT_EQ(split.cpu_micro_batches, c.chains) << c.text;
    EXPECT_EQ(split.cpu_block, c.block) << c.text;
    EXPECT_EQ(split.describe(), c.text);
  }
  SampleSplit split;
  EXPECT_FALSE(parse_sample_split("cuda", &split));
  for (const char *bad : {"samples:104x", "samples:104x0", "samples:104/x4", "samples:104x4/8",
                          "samples:104/8x-1", "samples:x4"}) {
    try {
      parse_sample_split(bad, &split);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace starcnn
