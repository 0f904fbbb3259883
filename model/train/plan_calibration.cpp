#include "model/train/plan_calibration.h"

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/merge.h"
#include "model/nn/tensor.h"
#include "partition/starpu_costs.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace starcnn {
namespace {

const char *const kAuto = "auto";

Where where_of(Side side) {
  return side == Side::cpu ? Where::cpu : Where::cuda;
}

// Runs of one shape StarPU needs before it trusts a history entry.
int calibration_runs() {
  const char *text = std::getenv("STARPU_CALIBRATE_MINIMUM");
  const int runs = text ? std::atoi(text) : 10;
  return runs > 0 ? runs : 10;
}

Tensor vector_tensor(size_t count, const std::string &name) {
  return Tensor({int(count)}, name);
}

// Tensors of calibration tasks, freed once their tasks are done (kept below a memory budget).
class CalibrationBuffers {
 public:
  Tensor &add(size_t count, const std::string &name) {
    bytes_ += count * sizeof(float);
    tensors_.push_back(std::make_unique<Tensor>(vector_tensor(count, name)));
    return *tensors_.back();
  }
  void flush_if_large() {
    if (bytes_ > (size_t(1) << 30)) flush();
  }
  void flush() {
    starpu_task_wait_for_all();
    tensors_.clear();
    bytes_ = 0;
  }

 private:
  std::vector<std::unique_ptr<Tensor>> tensors_;
  size_t bytes_ = 0;
};

size_t calibrate_conv(const MissingCosts::Conv &c, int runs, CalibrationBuffers &buffers) {
  const Conv2dShape &s = c.shape;
  if (c.side == Side::cuda) prepare_conv2d(s);
  const Where where = where_of(c.side);
  const GradientAccess access =
      c.accumulate ? GradientAccess::accumulate : GradientAccess::overwrite;
  Tensor &x = buffers.add(s.x_count(), "calib.x");
  Tensor &w = buffers.add(s.w_count(), "calib.w");
  Tensor &b = buffers.add(s.b_count(), "calib.b");
  Tensor &y = buffers.add(s.y_count(), "calib.y");
  for (int r = 0; r < runs; ++r) switch (c.op) {
      case ConvOp::forward:
        submit_conv2d_forward(x.handle(), w.handle(), b.handle(), y.handle(), s, where);
        break;
      case ConvOp::backward_filter:
        if (c.accumulate) {
          set_sum_reduction(w.handle());
          set_sum_reduction(b.handle());
        }
        submit_conv2d_backward_filter(x.handle(), y.handle(), w.handle(), b.handle(), s, access,
                                      where);
        break;
      case ConvOp::backward_data:
        if (c.accumulate) set_sum_reduction(x.handle());
        submit_conv2d_backward_data(w.handle(), y.handle(), x.handle(), s, access, where);
        break;
    }
  return size_t(runs);
}

size_t calibrate_merge(const MissingCosts::Merge &m, int runs, CalibrationBuffers &buffers) {
  std::vector<starpu_data_handle_t> parts;
  for (uint32_t p = 0; p < m.shape.parts; ++p)
    parts.push_back(buffers.add(m.shape.part_count(p), "calib.part").handle());
  starpu_data_handle_t whole = buffers.add(m.shape.whole_count(), "calib.whole").handle();
  for (int r = 0; r < runs; ++r) {
    if (m.split)
      submit_split(whole, parts, m.shape, where_of(m.side));
    else
      submit_merge(parts, whole, m.shape, where_of(m.side));
  }
  return size_t(runs);
}

// Runs every missing entry's task; returns the tasks submitted.
size_t calibrate(const MissingCosts &missing) {
  const int runs = calibration_runs();
  CalibrationBuffers buffers;
  size_t tasks = 0;
  for (const MissingCosts::Conv &c : missing.convs()) {
    tasks += calibrate_conv(c, runs, buffers);
    buffers.flush_if_large();
  }
  for (const MissingCosts::Merge &m : missing.merges()) {
    tasks += calibrate_merge(m, runs, buffers);
    buffers.flush_if_large();
  }
  buffers.flush();
  return tasks;
}

}  // namespace

bool uses_auto_plan(const NetworkSpec &spec, const NetworkPlanText &plans) {
  for (const LayerSpec &layer : spec.layers)
    if (layer.kind == LayerKind::conv && plans.plan_for(layer.name) == kAuto) return true;
  return false;
}

std::vector<AutoLayer> auto_layers(const NetworkSpec &spec, const NetworkPlanText &plans,
                                   const MachineWorkers &workers, int batch) {
  std::vector<AutoLayer> layers;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec &l = spec.layers[i];
    if (l.kind != LayerKind::conv) continue;
    AutoLayer layer;
    layer.name = l.name;
    layer.shape =
        Conv2dShape{uint32_t(batch), uint32_t(l.in.c),   uint32_t(l.in.h),   uint32_t(l.in.w),
                    uint32_t(l.out), uint32_t(l.kernel), uint32_t(l.stride), uint32_t(l.pad)};
    layer.input_grad = i > 0;  // the network's first layer computes no input gradient
    const std::string &text = plans.plan_for(l.name);
    if (text != kAuto) {
      try {
        layer.fixed = {parse_split_plan(text, l.out, workers)};
      } catch (const std::invalid_argument &e) {
        throw std::invalid_argument(l.name + ": " + e.what());
      }
    }
    layers.push_back(layer);
  }
  return layers;
}

AutoPlanning resolve_auto_plans(const NetworkSpec &spec, const NetworkPlanText &plans,
                                const MachineWorkers &workers, int batch,
                                const AutoPlanOptions &options) {
  const std::vector<AutoLayer> layers = auto_layers(spec, plans, workers, batch);
  const StarpuCosts costs;
  AutoPlanning out;
  const auto start = std::chrono::steady_clock::now();
  // A pass can leave an entry short: StarPU drops an entry's history when a run deviates too far
  // from its mean, which a loaded machine provokes. Passes go on until nothing is missing.
  for (int pass = 0; pass < 8; ++pass) {
    const MissingCosts missing(costs);
    for (const AutoLayer &layer : layers) {
      std::vector<SplitPlan> candidates =
          !layer.fixed.empty()
              ? layer.fixed
              : auto_candidates(int(layer.shape.c_out), workers, options.max_candidates);
      for (const SplitPlan &plan : candidates)
        for (Side in : {Side::cpu, Side::cuda})
          predict_layer_us(layer, plan, in, workers, missing, nullptr);
    }
    if (missing.empty()) break;
    out.calibration_tasks += calibrate(missing);
  }
  out.calibration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.choices = choose_auto_plans(layers, workers, costs, options);
  out.plans = plans;
  // Every conv has its own plan now; the default keeps the other ops on the side auto plans for.
  out.plans.default_plan =
      plans.default_plan == kAuto ? (workers.cuda > 0 ? "cuda" : "cpu") : plans.default_plan;
  out.plans.overrides.clear();
  for (size_t i = 0; i < layers.size(); ++i) {
    out.chosen.push_back(layers[i].fixed.empty());
    out.plans.overrides.emplace_back(layers[i].name, out.choices[i].plan.describe());
    out.text += (i ? ";" : "") + layers[i].name + "=" + out.choices[i].plan.describe();
    out.predicted_us += out.choices[i].predicted_us;
  }
  return out;
}

std::vector<std::string> describe(const AutoPlanning &planning) {
  char line[512];
  std::snprintf(line, sizeof(line),
                "auto plan: %zu calibration tasks in %.2f s, predicted conv time %.3f ms per step",
                planning.calibration_tasks, planning.calibration_seconds,
                planning.predicted_us / 1000.0);
  std::vector<std::string> lines{line};
  for (size_t i = 0; i < planning.choices.size(); ++i) {
    const AutoChoice &c = planning.choices[i];
    std::snprintf(
        line, sizeof(line), "  %s: %s, predicted %.3f ms (%s, input on %s)", c.layer.c_str(),
        c.plan.describe().c_str(), c.predicted_us / 1000.0,
        planning.chosen[i] ? (std::to_string(c.candidates) + " candidates").c_str() : "fixed plan",
        side_name(c.input_side));
    lines.push_back(line);
  }
  return lines;
}

}  // namespace starcnn
