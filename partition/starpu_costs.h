// The cost table of the `auto` policy read from StarPU: task times from the history perf models of
// the conv2d, merge and split codelets (an entry counts once StarPU has calibrated it, by default
// after 10 runs of that shape on that kind of worker), copy times from StarPU's bus calibration.
// It only asks: each question is an unsubmitted task of the codelet's shape, whose footprint finds
// the entry; nothing runs. Needs StarPU started.
#pragma once

#include "partition/auto_plan.h"

namespace starcnn {

class StarpuCosts : public CostTable {
 public:
  StarpuCosts();
  double conv_us(ConvOp op, const Conv2dShape &shape, bool accumulate, Side side) const override;
  double merge_us(const MergeShape &shape, bool split, Side side) const override;
  double transfer_us(size_t bytes, Side from, Side to) const override;

 private:
  int worker_of(Side side) const { return side == Side::cpu ? cpu_worker_ : cuda_worker_; }
  int cpu_worker_ = -1, cuda_worker_ = -1;  // one worker of each kind stands for its kind
};

}  // namespace starcnn
