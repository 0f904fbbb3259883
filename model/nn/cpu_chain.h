// A CPU micro-batch's whole training pass as one task: forward through every layer, the loss, and
// backward into its gradient slot, the layers' CPU kernels called in turn on one CPU worker.
// A micro-batch pinned to a CPU worker runs its ~14 layer tasks one after the other anyway, and
// under the H200's MPS cap each hand-off between them cost 0.1-0.2 ms: a chain of 8 lenet samples
// took ~2.5 ms for ~1.1 ms of kernels (perf/results/h200-2026-12-03-x). The numbers are the layer
// tasks' (the same kernels, in the same order).
#pragma once

#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/nn/tensor.h"

#include <optional>
#include <vector>

namespace starcnn {

class CpuChain {
 public:
  // The chain of `spec` for `batch` samples (loss averaged over `loss_batch`) writing gradient
  // slot `grad_slot`; nullopt when a layer cannot run in it (a convolution cut into filter parts,
  // more layers than kMaxChainOps).
  static std::optional<CpuChain> build(const NetworkSpec &spec, ParameterSet &params, int batch,
                                       int loss_batch, size_t grad_slot);

  // Submits the task on `where` (a CPU worker, or any CPU worker): images [batch, C, H, W] and
  // int32 labels in, the loss sum and correct count added into `stats` (softmax_xent.h).
  void submit(const Tensor &images, const Tensor &labels, const Tensor &stats, Where where) const;

  // The chain's packed description of its layers (the task's argument; public for the codelet).
  struct Op;
  struct Program;

 private:
  CpuChain() = default;
  // Per conv / linear layer w, dw, b, db; or the packed weights, then per layer dw, db.
  std::vector<starpu_data_descr> params_;
  std::vector<unsigned char> program_;  // a Program's bytes
};

constexpr int kMaxChainOps = 24;

}  // namespace starcnn
