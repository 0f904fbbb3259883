#include "partition/auto_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace starcnn {

const char *side_name(Side side) {
  return side == Side::cpu ? "cpu" : "cuda";
}

const char *conv_op_name(ConvOp op) {
  switch (op) {
    case ConvOp::forward:
      return "forward";
    case ConvOp::backward_filter:
      return "backward_filter";
    case ConvOp::backward_data:
      return "backward_data";
  }
  return "?";
}

double MissingCosts::conv_us(ConvOp op, const Conv2dShape &shape, bool accumulate,
                             Side side) const {
  const double us = inner_.conv_us(op, shape, accumulate, side);
  if (std::isnan(us)) {
    const auto same = [&](const Conv &c) {
      return c.op == op && c.shape == shape && c.accumulate == accumulate && c.side == side;
    };
    if (std::none_of(convs_.begin(), convs_.end(), same))
      convs_.push_back({op, shape, accumulate, side});
  }
  return us;
}

double MissingCosts::merge_us(const MergeShape &shape, bool split, Side side) const {
  const double us = inner_.merge_us(shape, split, side);
  if (std::isnan(us)) {
    const auto same = [&](const Merge &m) {
      return m.split == split && m.side == side && m.shape == shape;
    };
    if (std::none_of(merges_.begin(), merges_.end(), same)) merges_.push_back({shape, split, side});
  }
  return us;
}

double MissingCosts::transfer_us(size_t bytes, Side from, Side to) const {
  return inner_.transfer_us(bytes, from, to);
}

int cpu_filters(const SplitPlan &plan) {
  int filters = 0;
  for (const SplitPart &part : plan.parts)
    if (part.where == Where::cpu) filters += part.filters;
  return filters;
}

MergeShape merge_shape_of(const std::vector<PartTask> &tasks, uint32_t n, uint32_t hw, uint32_t c) {
  std::vector<MergePiece> pieces;
  for (const PartTask &t : tasks)
    pieces.push_back({uint32_t(t.first_channel), uint32_t(t.filters), t.first_sample, t.samples});
  return make_merge_shape(n, hw, c, pieces);
}

std::vector<SplitPlan> auto_candidates(int filters, const MachineWorkers &workers,
                                       int max_candidates) {
  const auto plan_with_cpu = [&](int on_cpu) {
    SplitPlan plan;
    if (on_cpu > 0) plan.parts.push_back({on_cpu, Where::cpu, std::max(1, workers.cpu)});
    if (on_cpu < filters) plan.parts.push_back({filters - on_cpu, Where::cuda, 1});
    return plan;
  };
  if (workers.cuda == 0) return {plan_with_cpu(filters)};
  if (workers.cpu == 0) return {plan_with_cpu(0)};
  std::vector<SplitPlan> plans{plan_with_cpu(0), plan_with_cpu(filters)};
  // CPU shares 1..C-1, all of them or an even grid of them.
  const int splits = std::max(0, std::min(filters - 1, max_candidates - 2));
  int last = 0;
  for (int i = 1; i <= splits; ++i) {
    const int on_cpu = int(std::lround(double(i) * filters / double(splits + 1)));
    if (on_cpu <= last || on_cpu >= filters) continue;
    plans.push_back(plan_with_cpu(on_cpu));
    last = on_cpu;
  }
  return plans;
}

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// Longest task first onto the least loaded of `workers` workers: the side's busy time.
double makespan(std::vector<double> tasks, int workers) {
  if (tasks.empty()) return 0;
  std::sort(tasks.begin(), tasks.end(), std::greater<double>());
  std::vector<double> load(size_t(std::max(1, workers)), 0.0);
  for (double t : tasks) *std::min_element(load.begin(), load.end()) += t;
  return *std::max_element(load.begin(), load.end());
}

size_t float_bytes(size_t count) {
  return count * sizeof(float);
}

}  // namespace

double predict_layer_us(const AutoLayer &layer, const SplitPlan &plan, Side input_side,
                        const MachineWorkers &workers, const CostTable &costs, Side *output_side) {
  const std::vector<PartTask> tasks = part_tasks(plan, layer.shape.n);
  const bool has_cuda = workers.cuda > 0;
  const auto side_of = [&](const PartTask &t) {
    return t.where == Where::cpu || (t.where == Where::any && !has_cuda) ? Side::cpu : Side::cuda;
  };
  const bool split = tasks.size() > 1;
  bool any_cuda = false;
  for (const PartTask &t : tasks) any_cuda = any_cuda || side_of(t) == Side::cuda;
  const Side merge_side = any_cuda ? Side::cuda : Side::cpu;
  if (output_side) *output_side = merge_side;

  const Conv2dShape &whole = layer.shape;
  const size_t x_bytes = float_bytes(whole.x_count());
  const size_t hw = size_t(whole.out_h()) * whole.out_w();
  MergeShape merge_shape;
  if (split) merge_shape = merge_shape_of(tasks, whole.n, uint32_t(hw), whole.c_out);
  // A part cut into sample blocks sums its blocks' filter gradients (STARPU_REDUX).
  std::vector<int> blocks(plan.parts.size(), 0);
  for (const PartTask &t : tasks) ++blocks[t.part];

  const auto unknown = [](const std::vector<double> &times) {
    return std::any_of(times.begin(), times.end(), [](double t) { return std::isnan(t); });
  };
  double forward = 0, backward = 0;
  bool known = true;
  for (Side side : {Side::cpu, Side::cuda}) {
    std::vector<double> fwd_tasks, bwd_tasks;
    size_t y_bytes = 0;
    for (const PartTask &t : tasks) {
      if (side_of(t) != side) continue;
      Conv2dShape shape = whole;
      shape.c_out = uint32_t(t.filters);
      shape.n = t.samples;
      y_bytes += float_bytes(size_t(t.samples) * hw * shape.c_out);
      fwd_tasks.push_back(costs.conv_us(ConvOp::forward, shape, false, side));
      bwd_tasks.push_back(costs.conv_us(ConvOp::backward_filter, shape, blocks[t.part] > 1, side));
      if (layer.input_grad)
        bwd_tasks.push_back(costs.conv_us(ConvOp::backward_data, shape, split, side));
    }
    if (fwd_tasks.empty()) continue;
    if (unknown(fwd_tasks) || unknown(bwd_tasks)) {
      known = false;
      continue;
    }
    const int side_workers = side == Side::cpu ? workers.cpu : workers.cuda;
    const double x_in = side != input_side ? costs.transfer_us(x_bytes, input_side, side) : 0.0;
    const double y_out = side != merge_side ? costs.transfer_us(y_bytes, side, merge_side) : 0.0;
    const double dx_out =
        layer.input_grad && side != input_side ? costs.transfer_us(x_bytes, side, input_side) : 0.0;
    // dY_p comes back the way Y_p went.
    const double dy_in = side != merge_side ? costs.transfer_us(y_bytes, merge_side, side) : 0.0;
    if (unknown({x_in, y_out, dx_out, dy_in})) {
      known = false;
      continue;
    }
    forward = std::max(forward, x_in + makespan(fwd_tasks, side_workers) + y_out);
    backward = std::max(backward, dy_in + makespan(bwd_tasks, side_workers) + dx_out);
  }
  // Asked even when a task is unknown, so that MissingCosts hears of every missing entry.
  const double merges = split ? costs.merge_us(merge_shape, false, merge_side) +
                                    costs.merge_us(merge_shape, true, merge_side)
                              : 0.0;
  if (!known) return kUnknown;
  const double total = forward + backward + merges;
  return total;  // NaN propagates from any unknown cost
}

std::vector<AutoChoice> choose_auto_plans(const std::vector<AutoLayer> &layers,
                                          const MachineWorkers &workers, const CostTable &costs,
                                          const AutoPlanOptions &options) {
  // best[s]: least predicted time of the layers so far with the next input on side s, and the
  // choices that reach it.
  // rank: the same time with each split's penalty, which is what the choice minimises.
  struct Path {
    double us = std::numeric_limits<double>::infinity();
    double rank = std::numeric_limits<double>::infinity();
    std::vector<AutoChoice> choices;
  };
  Path best[2];
  best[int(Side::cpu)].us = best[int(Side::cpu)].rank = 0;  // the batch is loaded into host memory
  for (const AutoLayer &layer : layers) {
    const std::vector<SplitPlan> candidates =
        !layer.fixed.empty()
            ? layer.fixed
            : auto_candidates(int(layer.shape.c_out), workers, options.max_candidates);
    Path next[2];
    bool predicted = false;
    for (Side in : {Side::cuda, Side::cpu}) {  // ties keep the path that stayed on CUDA
      const Path &from = best[int(in)];
      if (std::isinf(from.us)) continue;
      for (const SplitPlan &plan : candidates) {
        Side out = Side::cpu;
        const double us = predict_layer_us(layer, plan, in, workers, costs, &out);
        if (std::isnan(us) && candidates.size() > 1) continue;
        predicted = predicted || !std::isnan(us);
        const double known = std::isnan(us) ? 0.0 : us;
        const bool splits = cpu_filters(plan) > 0 && cpu_filters(plan) < plan.filters();
        // Ranked with the split penalty; ties keep the earlier (simpler) candidate.
        const double rank = from.rank + known * (splits ? 1.0 + options.min_gain : 1.0);
        if (rank < next[int(out)].rank) {
          next[int(out)].rank = rank;
          next[int(out)].us = from.us + known;
          next[int(out)].choices = from.choices;
          next[int(out)].choices.push_back({layer.name, plan, us, in, int(candidates.size())});
        }
      }
    }
    if (!predicted && candidates.size() > 1)
      throw std::runtime_error("auto plan: no candidate of layer " + layer.name +
                               " can be predicted (its perf models are not calibrated)");
    best[0] = std::move(next[0]);
    best[1] = std::move(next[1]);
  }
  // A tie between ending on either side goes to CUDA.
  const Path &done = best[int(Side::cuda)].rank <= best[int(Side::cpu)].rank ? best[int(Side::cuda)]
                                                                             : best[int(Side::cpu)];
  return done.choices;
}

}  // namespace starcnn
