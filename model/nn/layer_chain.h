// A micro-batch's whole training pass as one task: forward through every layer, the loss, and
// backward into its gradient slot, the layers' kernels called in turn on one worker.
// - On a CPU worker: a micro-batch pinned there runs its ~14 layer tasks one after the other
//   anyway, and under the H200's MPS cap each hand-off between them cost 0.1-0.2 ms: a chain of 8
//   lenet samples took ~2.5 ms for ~1.1 ms of kernels (perf/results/h200-2026-12-03-x).
// - On a CUDA worker (a network wholly on CUDA): each of a step's 13 (lenet) to 17 (wide) layer
//   tasks waited for the previous one's kernels to finish before its own launches began, ~1 ms a
//   step at lenet b64 for ~0.2 ms of kernels (perf/results/h200-2026-12-04-a, trace-gpu64). In one
//   task the launches overlap the kernels, and as a CUDA graph (CudaGraphCache) they are one
//   launch.
// The numbers are the layer tasks' (the same kernels, in the same order).
#pragma once

#include "model/nn/chain_claims.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/nn/tensor.h"

#include <memory>
#include <optional>
#include <vector>

namespace starcnn {

class ScratchVector;
struct ChainUpdateArgs;

// How a network wholly on CUDA trains (TrainConfig::cuda_chain): layer by layer (one task per
// layer and pass), as one task launching its kernels one by one, or as one task replaying them as
// a CUDA graph.
enum class CudaChain { off, kernels, graph };

class LayerChain {
 public:
  // The chain of `spec` for `batch` samples (loss averaged over `loss_batch`) writing gradient
  // slot `grad_slot`, run on the workers of `side`'s kind (the CPU's reads the packed weights where
  // the parameter set has them; `cuda` says how the CUDA one launches its kernels); nullopt when a
  // layer cannot run in it (a convolution cut into filter parts, more layers than kMaxChainOps).
  // `claim_block` > 0 (a CPU chain of packed gradients): the chain runs blocks of that many
  // samples that it claims from its split's chains (chain_claims.h); see submit.
  static std::optional<LayerChain> build(const NetworkSpec &spec, ParameterSet &params, int batch,
                                         int loss_batch, size_t grad_slot, Where side,
                                         CudaChain cuda = CudaChain::graph, int claim_block = 0);

  // The other chains of a claiming chain's split in this step: their images and labels in the
  // chains' order (the ticket's own chain's left out) and the ticket.
  struct Peers {
    std::vector<const Tensor *> images, labels;
    ClaimTicket ticket;
  };

  // Submits the task on `where` (a worker of the chain's side): images [batch, C, H, W] and
  // int32 labels in, the loss sum and correct count added into `stats` (softmax_xent.h). A
  // claiming chain's task needs `peers`; it writes its gradient slot whatever it claims (zeros
  // when it claims nothing).
  void submit(const Tensor &images, const Tensor &labels, const Tensor &stats, Where where,
              const Peers *peers = nullptr) const;
  bool claims() const { return claims_; }
  // Whether the chain reads the parameter set's packed host weights (the mirror's CPU chains).
  bool reads_packed_weights() const { return packed_weights_; }

  // Runs `params`' held update (ParameterSet::use_update_fold) at the start of each task from
  // now on, where the chain can: it reads the parameters' own weights and writes gradient slot 0
  // (or the packed gradients that the update reads), and covers every parameter. The caller
  // makes sure that no other task reads the weights. A CUDA chain's warm-up launches
  // (kCudaChainWarmupLaunches) submit the held update as a task of its own instead. Returns
  // whether the fold is on.
  bool fold_update(ParameterSet &params);

  // The chain's packed description of its layers (the task's argument; layer_chain_program.h).
  struct Op;
  struct Program;

 private:
  LayerChain() = default;
  // The held update's buffers after a folding task's own (layer_chain_program.h's order): its
  // second argument.
  ChainUpdateArgs add_update_buffers(const ParameterSet::FoldedUpdate &update,
                                     std::vector<starpu_data_descr> &buffers) const;
  bool cuda_ = false;
  bool fp32_ = false;    // a CUDA chain's convolutions in strict FP32 (its own perf model)
  bool claims_ = false;  // a CPU chain claiming blocks of its split's samples
  bool packed_weights_ = false, packed_grads_ = false;
  Where side_ = Where::any;
  size_t grad_slot_ = 0;
  std::vector<Parameter *> parameters_;  // w and b of each layer with parameters, in order
  ParameterSet *fold_ = nullptr;         // whose held update the task runs first (fold_update)
  // The task's parameter buffers, in layer_chain_program.h's order.
  std::vector<starpu_data_descr> params_;
  // A CUDA chain's scratch buffers (activations, their gradients, argmax), shared by its copies.
  std::vector<std::shared_ptr<ScratchVector>> scratch_;
  std::vector<unsigned char> program_;  // a Program's bytes
  mutable unsigned launches_ = 0;  // tasks submitted (the first ones are a CUDA chain's warm-up)
};

constexpr int kMaxChainOps = 24;

}  // namespace starcnn
