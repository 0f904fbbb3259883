// The network as a list of layers over one batch size, plus the softmax cross-entropy loss. Each
// call only submits tasks: a whole training step is one task flow, with no waiting inside it.
#pragma once

#include "codelets/softmax_xent.h"
#include "model/nn/layer.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"

#include <memory>
#include <string>
#include <vector>

namespace starcnn {

class Network {
 public:
  // Throws std::invalid_argument for a layer starcnn cannot run (e.g. a maxpool other than 2).
  // A network on one micro-batch of a step averages its loss over the step's `loss_batch`
  // samples and adds its parameter gradients to the other micro-batches' (GradientAccess::
  // accumulate); a network on a whole step has loss_batch == batch and overwrites them.
  Network(const NetworkSpec &spec, ParameterSet &params, int batch, int loss_batch = 0,
          GradientAccess grad_access = GradientAccess::overwrite);

  int batch() const { return batch_; }
  int classes() const { return classes_; }
  // Submits the forward pass of `input` [batch, C, H, W] and the loss against `labels` [batch]
  // (int32); the loss sum and correct count are added into `stats` (see softmax_xent.h).
  void forward(const Tensor &input, const Tensor &labels, const Tensor &stats);
  // Submits the forward pass of `input` up to logits() only, without the loss.
  void forward_logits(const Tensor &input);
  // Submits the backward pass of the last forward (same input and labels).
  void backward(const Tensor &input, const Tensor &labels);
  const Tensor &logits() const { return layers_.back()->output(); }
  // One line per layer, for the run's header.
  std::vector<std::string> describe() const;

 private:
  int batch_, loss_batch_, classes_;
  std::vector<std::unique_ptr<Layer>> layers_;
  Tensor logits_grad_;
};

}  // namespace starcnn
