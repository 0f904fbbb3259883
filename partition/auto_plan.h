// The `auto` split policy: for each convolution, every candidate split (k filters on the CPU
// workers, cut into one task per CPU worker, the rest on CUDA workers, from all-CUDA to all-CPU) is
// given a predicted step time from a cost table, and the plan of least predicted time wins.
//
// The step time of one layer under a plan, with its input X living on side S_in:
//   forward   on each side s holding parts: X copied S_in -> s when they differ, then the parts'
//             forward tasks scheduled on s's workers (longest first onto the least loaded
//             worker), then the parts' outputs copied to the merge side M (CUDA if any part is
//             there) and merged there;  forward = max over sides + merge
//   backward  dY (on M) split into parts, dY_p copied to the other side, the backward-filter and
//             backward-data tasks scheduled like the forward ones, and each side's dX contribution
//             copied back to S_in;  backward = split + max over sides
// The layer's output then lives on M, which is the next layer's S_in: the choice over the layers is
// a shortest path over (layer, side of its input), which the chooser solves exactly. The network's
// input comes from the host (S_in = CPU for the first layer); layers after the last convolution
// are left out. A split (a plan using both kinds of worker) must beat the best one-sided plan by
// `min_gain`, so a layer stays whole on its faster side when co-execution cannot clearly pay.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/merge.h"
#include "partition/split_plan.h"

#include <string>
#include <vector>

namespace starcnn {

enum class Side { cpu, cuda };
enum class ConvOp { forward, backward_filter, backward_data };
const char *side_name(Side side);
const char *conv_op_name(ConvOp op);

// Predicted microseconds of the tasks and copies a plan is made of; NaN where nothing is known.
class CostTable {
 public:
  virtual ~CostTable() = default;
  // One task of `op` on `shape` (shape.c_out: the part's filters) on one worker of `side`;
  // `accumulate`: the task adds into its output (STARPU_REDUX), as the parts of a split layer do.
  virtual double conv_us(ConvOp op, const Conv2dShape &shape, bool accumulate, Side side) const = 0;
  // A merge (forward) or split (backward) task of `shape` on one worker of `side`.
  virtual double merge_us(const MergeShape &shape, bool split, Side side) const = 0;
  // Copying `bytes` from one side's memory to the other's.
  virtual double transfer_us(size_t bytes, Side from, Side to) const = 0;
};

// A cost table that answers like `inner` and remembers every question answered with NaN, so the
// caller can calibrate exactly those (partition/ only asks; it never runs a task).
class MissingCosts : public CostTable {
 public:
  struct Conv {
    ConvOp op;
    Conv2dShape shape;
    bool accumulate;
    Side side;
  };
  struct Merge {
    MergeShape shape;
    bool split;
    Side side;
  };
  explicit MissingCosts(const CostTable &inner) : inner_(inner) {}
  double conv_us(ConvOp op, const Conv2dShape &shape, bool accumulate, Side side) const override;
  double merge_us(const MergeShape &shape, bool split, Side side) const override;
  double transfer_us(size_t bytes, Side from, Side to) const override;
  // Each missing entry once.
  const std::vector<Conv> &convs() const { return convs_; }
  const std::vector<Merge> &merges() const { return merges_; }
  bool empty() const { return convs_.empty() && merges_.empty(); }

 private:
  const CostTable &inner_;
  mutable std::vector<Conv> convs_;
  mutable std::vector<Merge> merges_;
};

// One convolution to plan: its whole shape (n: the batch) and whether the step computes its input
// gradient (not for the network's first layer).
struct AutoLayer {
  std::string name;
  Conv2dShape shape;
  bool input_grad = true;
  std::vector<SplitPlan> fixed;  // when not empty: the only candidates (a layer not planned `auto`)
};

struct AutoPlanOptions {
  double min_gain = 0.03;   // a split must be predicted this much faster than the best whole plan
  int max_candidates = 65;  // CPU shares tried per layer (all of 0..C when C + 1 fits)
};

// The candidate plans of a layer of `filters` filters, whole plans first (all-CUDA, all-CPU),
// then splits by growing CPU share. Without CUDA workers the only one is all-CPU, without CPU
// workers all-CUDA.
std::vector<SplitPlan> auto_candidates(int filters, const MachineWorkers &workers,
                                       int max_candidates = AutoPlanOptions().max_candidates);

// Predicted forward + backward time of `layer` under `plan` with its input on `input_side`;
// NaN when a cost is unknown. `output_side` receives where the output ends up.
double predict_layer_us(const AutoLayer &layer, const SplitPlan &plan, Side input_side,
                        const MachineWorkers &workers, const CostTable &costs, Side *output_side);

struct AutoChoice {
  std::string layer;
  SplitPlan plan;
  double predicted_us = 0;  // NaN when unknown (a single candidate is chosen unpredicted)
  Side input_side = Side::cpu;
  int candidates = 0;
};

// The plans of least predicted total time. Throws std::runtime_error when some layer has several
// candidates and none can be predicted (calibrate first: see MissingCosts).
std::vector<AutoChoice> choose_auto_plans(const std::vector<AutoLayer> &layers,
                                          const MachineWorkers &workers, const CostTable &costs,
                                          const AutoPlanOptions &options = AutoPlanOptions());

// The merge of a split layer's task outputs (see part_tasks()): n samples of c channels of hw.
MergeShape merge_shape_of(const std::vector<PartTask> &tasks, uint32_t n, uint32_t hw, uint32_t c);

// Filters a plan gives the CPU workers.
int cpu_filters(const SplitPlan &plan);

}  // namespace starcnn
