// Resolves the `auto` split plan (partition/auto_plan.h) for a network: the perf-model entries the
// candidates need and StarPU has not calibrated yet are measured first, by running those conv2d,
// merge and split tasks on the kind of worker each is for (as many times as StarPU needs to
// trust an entry, STARPU_CALIBRATE_MINIMUM, 10 by default), then the chooser picks each layer's
// plan from StarPU's predictions. The perf models keep the measurements (in STARPU_HOME), so a
// later run of the same shapes calibrates nothing.
#pragma once

#include "model/nn/network_spec.h"
#include "partition/auto_plan.h"
#include "partition/split_plan.h"

#include <string>
#include <vector>

namespace starcnn {

struct AutoPlanning {
  NetworkPlanText plans;            // `auto` replaced by each layer's chosen plan
  std::string text;                 // the same as --plan text: "conv1=6@cuda;conv2=4@cpu/2,12@cuda"
  std::vector<AutoChoice> choices;  // every conv layer in order, `auto` or not
  std::vector<bool> chosen;         // whether the layer was planned `auto`
  double predicted_us = 0;          // sum over the conv layers (NaN if any is unknown)
  size_t calibration_tasks = 0;
  double calibration_seconds = 0;
};

// Whether some conv layer of `spec` is planned `auto`.
bool uses_auto_plan(const NetworkSpec &spec, const NetworkPlanText &plans);

// The conv layers as the chooser sees them, at `batch` samples per step; layers not planned `auto`
// keep their plan as their only candidate.
std::vector<AutoLayer> auto_layers(const NetworkSpec &spec, const NetworkPlanText &plans,
                                   const MachineWorkers &workers, int batch);

// Needs StarPU started (model/runtime/runtime.h). Throws std::invalid_argument for a plan that does
// not parse, std::runtime_error when a layer cannot be predicted even after calibration.
AutoPlanning resolve_auto_plans(const NetworkSpec &spec, const NetworkPlanText &plans,
                                const MachineWorkers &workers, int batch,
                                const AutoPlanOptions &options = AutoPlanOptions());

// One line per conv layer: "conv2: 8@cpu/2,8@cuda, predicted 1.234 ms (17 candidates)", and a
// first line on the calibration.
std::vector<std::string> describe(const AutoPlanning &planning);

}  // namespace starcnn
