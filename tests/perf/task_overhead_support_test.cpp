// task_overhead's JSON line as simulate's charges: files written before cpu_handoff_us still load
// (charged the chain), newer ones charge the hand-off unless the chain is asked for.
#include "perf/task_overhead_support.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

// Call h's line (perf/models/h200/task_overhead.json), before cpu_handoff_us.
const std::string kOld =
    R"({"engine": "starcnn", "benchmark": "task_overhead", "cpu_workers": 15, "cuda_workers": 1, )"
    R"("submit_us": 1.477, "cpu_chain_us": 6.755, "cuda_chain_us": 7.669})";
const std::string kNew =
    R"({"engine": "starcnn", "benchmark": "task_overhead", "cpu_workers": 15, "cuda_workers": 0, )"
    R"("submit_us": 1.5, "cpu_chain_us": 6.75, "cpu_chain_moved": 0.001, )"
    R"("cpu_handoff_us": 31.25, "cpu_parallel_chain_us": 9.5})";

TEST(TaskOverheadSupport, OldLineChargesTheChain) {
  std::string key;
  const TaskOverheads costs = parse_task_overheads(kOld, CpuTaskCost::handoff, &key);
  EXPECT_DOUBLE_EQ(costs.submit_us, 1.477);
  EXPECT_DOUBLE_EQ(costs.cpu_us, 6.755);
  EXPECT_DOUBLE_EQ(costs.cuda_us, 7.669);
  EXPECT_DOUBLE_EQ(costs.parallel_cpu_us, 0.0);  // not measured then
  EXPECT_EQ(key, "cpu_chain_us");
}

TEST(TaskOverheadSupport, NewLineChargesTheHandoff) {
  std::string key;
  const TaskOverheads costs = parse_task_overheads(kNew, CpuTaskCost::handoff, &key);
  EXPECT_DOUBLE_EQ(costs.cpu_us, 31.25);
  EXPECT_DOUBLE_EQ(costs.cuda_us, 0.0);  // no CUDA worker measured
  EXPECT_DOUBLE_EQ(costs.parallel_cpu_us, 9.5);
  EXPECT_EQ(key, "cpu_handoff_us");
}

TEST(TaskOverheadSupport, ChainKeepsTheFirstCharge) {
  std::string key;
  EXPECT_DOUBLE_EQ(parse_task_overheads(kNew, CpuTaskCost::chain, &key).cpu_us, 6.75);
  EXPECT_EQ(key, "cpu_chain_us");
}

TEST(TaskOverheadSupport, LineWithoutTheChainIsRefused) {
  EXPECT_THROW(parse_task_overheads(R"({"submit_us": 1.5})", CpuTaskCost::handoff),
               std::runtime_error);
  EXPECT_THROW(parse_task_overheads("not json", CpuTaskCost::chain), std::runtime_error);
}

}  // namespace
}  // namespace starcnn
