#include "perf/task_overhead_support.h"

#include "model/io/json.h"

#include <cmath>

namespace starcnn {

TaskOverheads parse_task_overheads(const std::string &line, CpuTaskCost cost,
                                   std::string *cpu_key) {
  const json::Value value = json::parse(line);
  // A missing optional key reads as NaN: absent, not zero.
  const auto number = [&](const char *key, bool required) {
    const json::Value *field = value.find(key);
    if (!field) {
      if (required) throw json::ParseError(std::string("no \"") + key + "\" field");
      return std::nan("");
    }
    return json::to_double(*field, key);
  };
  TaskOverheads costs;
  costs.submit_us = number("submit_us", true);
  costs.cpu_us = number("cpu_chain_us", true);
  std::string key = "cpu_chain_us";
  const double handoff = number("cpu_handoff_us", false);
  if (cost == CpuTaskCost::handoff && !std::isnan(handoff)) {
    costs.cpu_us = handoff;
    key = "cpu_handoff_us";
  }
  // Without a CUDA worker, or from a task_overhead older than the parallel chains: no charge.
  const auto or_zero = [](double x) { return std::isnan(x) ? 0.0 : x; };
  costs.cuda_us = or_zero(number("cuda_chain_us", false));
  costs.parallel_cpu_us = or_zero(number("cpu_parallel_chain_us", false));
  if (cpu_key) *cpu_key = key;
  return costs;
}

}  // namespace starcnn
