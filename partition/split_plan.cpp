#include "partition/split_plan.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace starcnn {
namespace {

[[noreturn]] void fail(const std::string &text, const std::string &why) {
  throw std::invalid_argument("split plan '" + text + "': " + why);
}

// No layer has more filters than this (the network description's limit), and the sum of a plan's
// parts stays far from int's limit.
constexpr int max_count = 1 << 20;

int parse_positive(const std::string &text, const std::string &number, const char *what) {
  const bool digits =
      !number.empty() && number.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || number.find_first_not_of('0') == std::string::npos)
    fail(text, std::string(what) + " must be a positive whole number, got '" + number + "'");
  if (number.size() > 7 || std::stoi(number) > max_count)
    fail(text, std::string(what) + " " + number + " is too large (at most " +
                   std::to_string(max_count) + ")");
  return std::stoi(number);
}

// `name` as a place to run: cpu, cuda (or gpu), any, or cudaN (CUDA device N's worker alone);
// nullopt for anything else. Throws for a malformed or impossible device number.
std::optional<Where> named_where(const std::string &text, const std::string &name) {
  if (name == "cpu") return Where::cpu;
  if (name == "cuda" || name == "gpu") return Where::cuda;
  if (name == "any") return Where::any;
  if (name.rfind("cuda", 0) != 0 || name.size() == 4 ||
      name.find_first_not_of("0123456789", 4) != std::string::npos)
    return std::nullopt;
  const std::string number = name.substr(4);
  if (number.size() > 1 && number[0] == '0')
    fail(text, "'" + name + "': write CUDA device numbers without leading zeros (cuda" +
                   std::to_string(std::stoi(number.substr(0, 7))) + ")");
  if (number.size() > 3 || std::stoi(number) >= STARPU_MAXCUDADEVS)
    fail(text, "'" + name + "': StarPU handles CUDA devices 0 to " +
                   std::to_string(STARPU_MAXCUDADEVS - 1));
  return cuda_device(std::stoi(number));
}

Where parse_where(const std::string &text, const std::string &name) {
  if (const std::optional<Where> where = named_where(text, name)) return *where;
  fail(text, "unknown worker kind '" + name + "' (use cpu, cuda, cudaN for CUDA device N, or any)");
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) items.push_back(item);
  if (!text.empty() && text.back() == sep) items.push_back("");
  return items;
}

SplitPlan even_plan(int filters, int parts) {
  SplitPlan plan;
  for (int p = 0; p < parts; ++p)
    plan.parts.push_back({filters / parts + (p < filters % parts ? 1 : 0), Where::any, 1});
  return plan;
}

SplitPlan list_plan(const std::string &text, const MachineWorkers &workers) {
  SplitPlan plan;
  for (const std::string &item : split(text, ',')) {
    const size_t at = item.find('@');
    if (at == std::string::npos) fail(text, "part '" + item + "' is not FILTERS@WHERE");
    SplitPart part;
    part.filters = parse_positive(text, item.substr(0, at), "a part's filter count");
    std::string where = item.substr(at + 1);
    const size_t slash = where.find('/');
    if (slash != std::string::npos) {
      part.tasks = parse_positive(text, where.substr(slash + 1), "a part's task count");
      where = where.substr(0, slash);
    }
    part.where = parse_where(text, where);
    if (slash == std::string::npos && part.where == Where::cpu) part.tasks = workers.cpu;
    plan.parts.push_back(part);
  }
  return plan;
}

}  // namespace

int SplitPlan::filters() const {
  int total = 0;
  for (const SplitPart &part : parts) total += part.filters;
  return total;
}

std::string SplitPlan::describe() const {
  std::string out;
  for (const SplitPart &part : parts) {
    if (!out.empty()) out += ',';
    out += std::to_string(part.filters) + '@';
    out += where_name(part.where);
    // A CPU part without /T would parse back with one task per CPU worker: always write it.
    if (part.tasks != 1 || part.where == Where::cpu) out += '/' + std::to_string(part.tasks);
  }
  return out;
}

SplitPlan parse_split_plan(const std::string &text, int filters, const MachineWorkers &workers) {
  if (filters <= 0) fail(text, "the layer has no filters");
  if (text == "auto")
    fail(text,
         "auto is chosen from StarPU's perf models before the layers are built "
         "(model/train/plan_calibration.h), not parsed");
  SplitPlan plan;
  SampleSplit samples;
  if (text == "none") {
    plan = even_plan(filters, 1);
  } else if (const std::optional<Where> where = named_where(text, text);
             where && *where != Where::any) {
    plan.parts.push_back({filters, *where, 1});  // cpu, cuda or cudaN: the whole layer there
  } else if (parse_sample_split(text, &samples)) {
    if (workers.cuda == 0) fail(text, "a sample split needs a CUDA worker and StarPU found none");
    plan.parts.push_back({filters, Where::cuda, 1});
  } else if (text.rfind("even:", 0) == 0) {
    const int parts = parse_positive(text, text.substr(5), "K");
    if (parts > filters)
      fail(text, "cannot cut " + std::to_string(filters) + " filters into " +
                     std::to_string(parts) + " parts");
    plan = even_plan(filters, parts);
  } else if (text.rfind("cpu:", 0) == 0) {
    const int on_cpu = parse_positive(text, text.substr(4), "N");
    if (on_cpu > filters) fail(text, "the layer has only " + std::to_string(filters) + " filters");
    plan.parts.push_back({on_cpu, Where::cpu, workers.cpu});
    if (on_cpu < filters) plan.parts.push_back({filters - on_cpu, Where::cuda, 1});
  } else {
    plan = list_plan(text, workers);
  }
  int64_t total = 0;  // parts of up to max_count filters each: a sum in int could wrap
  for (const SplitPart &part : plan.parts) total += part.filters;
  if (total != filters)
    fail(text, "parts add up to " + std::to_string(total) + " filters, the layer has " +
                   std::to_string(filters));
  for (const SplitPart &part : plan.parts) {
    if (part.where == Where::cpu && workers.cpu == 0) fail(text, "a part needs a CPU worker");
    if (kind_of(part.where) == Where::cuda && workers.cuda == 0)
      fail(text, "a part needs a CUDA worker and StarPU found none");
    const int device = device_of(part.where);
    if (device >= workers.cuda)
      fail(text,
           "a part is on CUDA device " + std::to_string(device) + " (cuda" +
               std::to_string(device) + ") but StarPU found " + std::to_string(workers.cuda) +
               " CUDA worker" +
               (workers.cuda == 1 ? " (cuda0)"
                                  : "s (cuda0 to cuda" + std::to_string(workers.cuda - 1) + ")"));
  }
  return plan;
}

std::vector<PartTask> part_tasks(const SplitPlan &plan, uint32_t n) {
  std::vector<PartTask> tasks;
  int channel = 0;
  for (size_t p = 0; p < plan.parts.size(); ++p) {
    const SplitPart &part = plan.parts[p];
    const uint32_t blocks = std::max<uint32_t>(1, std::min<uint32_t>(uint32_t(part.tasks), n));
    uint32_t first = 0;
    for (uint32_t t = 0; t < blocks; ++t) {
      const uint32_t samples = n / blocks + (t < n % blocks ? 1 : 0);
      tasks.push_back({p, part.filters, channel, part.where, first, samples});
      first += samples;
    }
    channel += part.filters;
  }
  return tasks;
}

std::string SampleSplit::describe() const {
  return "samples:" + std::to_string(cpu_samples) +
         (cpu_micro_batches > 0 ? "/" + std::to_string(cpu_micro_batches) : "") +
         (cpu_block > 0 ? "x" + std::to_string(cpu_block) : "");
}

bool parse_sample_split(const std::string &text, SampleSplit *split) {
  if (text.rfind("samples:", 0) != 0) return false;
  std::string rest = text.substr(8);
  const size_t slash = rest.find('/');
  SampleSplit parsed;
  const size_t x = rest.find('x');
  if (x != std::string::npos) {
    parsed.cpu_block = parse_positive(text, rest.substr(x + 1), "B");
    rest = rest.substr(0, x);
  }
  if (slash != std::string::npos && slash < rest.size()) {
    parsed.cpu_micro_batches = parse_positive(text, rest.substr(slash + 1), "M");
    rest = rest.substr(0, slash);
  }
  parsed.cpu_samples = parse_positive(text, rest, "K");
  *split = parsed;
  return true;
}

Where home_of(const NetworkPlanText &plans, const MachineWorkers &workers) {
  const std::string &text = plans.default_plan;
  if (text == "none" || text.rfind("even:", 0) == 0) return Where::any;
  if (text == "cpu" || workers.cuda == 0) return Where::cpu;
  // A whole-network cudaN keeps every op on that device (parse_split_plan checks it exists).
  if (const std::optional<Where> where = named_where(text, text); where && device_of(*where) >= 0)
    return *where;
  return Where::cuda;
}

const std::string &NetworkPlanText::plan_for(const std::string &layer) const {
  for (const auto &[name, plan] : overrides)
    if (name == layer) return plan;
  return default_plan;
}

NetworkPlanText parse_network_plan(const std::string &text) {
  NetworkPlanText plans;
  const std::vector<std::string> items = split(text, ';');
  if (items.empty()) return plans;
  size_t first = 0;
  if (items[0].find('=') == std::string::npos) {
    plans.default_plan = items[0];
    first = 1;
  }
  for (size_t i = first; i < items.size(); ++i) {
    const size_t eq = items[i].find('=');
    if (eq == std::string::npos || eq == 0)
      fail(text, "'" + items[i] + "' is not LAYER=PLAN (only the first item may be a bare plan)");
    plans.overrides.emplace_back(items[i].substr(0, eq), items[i].substr(eq + 1));
  }
  return plans;
}

}  // namespace starcnn
