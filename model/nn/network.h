// The network as a list of layers over one batch size, plus the softmax cross-entropy loss. Each
// call only submits tasks: a whole training step is one task flow, with no waiting inside it.
#pragma once

#include "codelets/softmax_xent.h"
#include "model/nn/layer.h"
#include "model/nn/layer_chain.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace starcnn {

// Where a network's tasks run: its layers' ops on `home` (see home_of() in partition/), its
// convolutions' parts where their plans say, or, with convs_at_home (the CPU micro-batches of a
// sample split), on `home` too.
struct NetworkPlacement {
  Where home = Where::any;
  bool convs_at_home = false;
  // A chain pinned to a CPU worker: > 0 claims blocks of this many samples from its split's
  // chains (chain_claims.h) instead of running its own samples alone.
  int claim_block = 0;
  // Every conv of the network runs on one CPU worker: the chain a sample split pins there.
  bool pinned_to_cpu_worker() const {
    return convs_at_home && kind_of(home) == Where::cpu && device_of(home) >= 0;
  }
};

class Network {
 public:
  // Throws std::invalid_argument for a layer starcnn cannot run (e.g. a maxpool other than 2).
  // A network on one micro-batch of a step averages its loss over the step's `loss_batch`
  // samples and writes its parameter gradients into its own `grad_slot` (made beforehand by
  // ParameterSet::use_grad_slots; the step sums the slots); a network on a whole step has
  // loss_batch == batch and slot 0. The placement defaults to the parameter set's plan
  // (ParameterSet::home()). `fuse`: a whole convolution runs the ReLU and maxpool after it in its
  // own tasks (ConvFusion), one task each way instead of two or three, and forward_backward's
  // loss is one task. `cuda_chain`: how forward_backward runs a fusing network whose every layer
  // is whole on CUDA (layer_chain.h).
  Network(const NetworkSpec &spec, ParameterSet &params, int batch, int loss_batch = 0,
          size_t grad_slot = 0, std::optional<NetworkPlacement> placement = std::nullopt,
          bool fuse = true, CudaChain cuda_chain = CudaChain::off);

  int batch() const { return batch_; }
  Where home() const { return home_; }
  int classes() const { return classes_; }
  // Submits the forward pass of `input` [batch, C, H, W] and the loss against `labels` [batch]
  // (int32); the loss sum and correct count are added into `stats` (see softmax_xent.h).
  void forward(const Tensor &input, const Tensor &labels, const Tensor &stats);
  // Submits the forward pass of `input` up to logits() only, without the loss.
  void forward_logits(const Tensor &input);
  // Submits the backward pass of the last forward (same input and labels).
  void backward(const Tensor &input, const Tensor &labels);
  // A training step's passes: forward, then backward, as the two calls above; a fusing network
  // computes the loss and its gradient in one task, and one pinned to a CPU worker (a CPU
  // micro-batch's chain) or wholly on CUDA (with cuda_chain) runs the whole pass as one task
  // (LayerChain).
  // A claiming chain's (claims()) needs its split's other chains (LayerChain::submit).
  void forward_backward(const Tensor &input, const Tensor &labels, const Tensor &stats,
                        const LayerChain::Peers *peers = nullptr);
  bool claims() const { return chain_ && chain_->claims(); }
  // The network's chain reads the packed host weights (a sample split's CPU chain).
  bool reads_packed_weights() const { return chain_ && chain_->reads_packed_weights(); }
  // LayerChain::fold_update of the network's chain; false without one.
  bool fold_update(ParameterSet &params) { return chain_ && chain_->fold_update(params); }
  const Tensor &logits() const { return layers_.back()->output(); }
  // One line per layer, for the run's header.
  std::vector<std::string> describe() const;

 private:
  // The backward pass below the loss, from logits_grad_.
  void backward_layers(const Tensor &input);
  SoftmaxXentShape loss_shape() const { return {uint32_t(batch_), uint32_t(classes_)}; }

  int batch_, loss_batch_, classes_;
  Where home_;
  bool fuse_;
  // A fusing network pinned to one CPU worker, or wholly on CUDA, trains as one task
  // (layer_chain.h).
  std::optional<LayerChain> chain_;
  std::vector<std::unique_ptr<Layer>> layers_;
  Tensor logits_grad_;
};

}  // namespace starcnn
