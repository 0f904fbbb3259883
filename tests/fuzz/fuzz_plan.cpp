// Split plans: the first two bytes pick the layer's filter count, the rest is the plan text; any
// text parses to parts that add up to the filters, each positive, or gives an error.
#include "partition/split_plan.h"

#include <cstdlib>
#include <stdexcept>

using namespace starcnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const int filters = 1 + (data[0] | data[1] << 8) % 4096;
  const std::string text(reinterpret_cast<const char *>(data + 2), size - 2);
  try {
    const NetworkPlanText plans = parse_network_plan(text);
    for (const std::string &plan : {plans.default_plan, plans.plan_for("conv2")}) {
      try {
        const SplitPlan parsed = parse_split_plan(plan, filters, MachineWorkers{3, 1});
        int64_t total = 0;
        for (const SplitPart &part : parsed.parts) {
          if (part.filters <= 0 || part.tasks <= 0) std::abort();
          total += part.filters;
        }
        if (total != filters || parsed.filters() != filters) std::abort();
        if (parse_split_plan(parsed.describe(), filters, MachineWorkers{3, 1}).describe() !=
            parsed.describe())
          std::abort();
      } catch (const std::invalid_argument &) {
      }
    }
  } catch (const std::invalid_argument &) {
  }
  return 0;
}
