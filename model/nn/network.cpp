#include "model/nn/network.h"

#include "model/nn/conv_layer.h"
#include "model/nn/linear_layer.h"
#include "model/nn/pool_layer.h"
#include "model/nn/relu_layer.h"

#include <stdexcept>

namespace starcnn {
namespace {

std::vector<int> batch_shape(int batch, const ActivationShape &shape) {
  if (shape.flat) return {batch, shape.c};
  return {batch, shape.c, shape.h, shape.w};
}

bool next_is(const NetworkSpec &spec, size_t i, LayerKind kind) {
  return i + 1 < spec.layers.size() && spec.layers[i + 1].kind == kind;
}

// Whether every convolution of `spec` is one whole task on CUDA workers under `params`' plans.
bool convs_whole_on_cuda(const ParameterSet &params, const NetworkSpec &spec, uint32_t batch) {
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind != LayerKind::conv) continue;
    const SplitPlan &plan = params.conv_plan(layer.name);
    if (!ConvLayer::is_whole_plan(plan, batch) || kind_of(plan.parts[0].where) != Where::cuda)
      return false;
  }
  return true;
}

}  // namespace

Network::Network(const NetworkSpec &spec, ParameterSet &params, int batch, int loss_batch,
                 size_t grad_slot, std::optional<NetworkPlacement> placement, bool fuse,
                 CudaChain cuda_chain)
    : batch_(batch),
      loss_batch_(loss_batch > 0 ? loss_batch : batch),
      classes_(int(spec.output().size())),
      fuse_(fuse) {
  const NetworkPlacement place = placement.value_or(NetworkPlacement{params.home(), false});
  home_ = place.home;
  if (batch <= 0) throw std::invalid_argument("batch size must be positive");
  if (grad_slot >= params.grad_slots())
    throw std::invalid_argument("gradient slot " + std::to_string(grad_slot) +
                                " of a parameter set with " + std::to_string(params.grad_slots()));
  const uint32_t n = uint32_t(batch);
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec &layer = spec.layers[i];
    const std::string where = spec.source + " line " + std::to_string(layer.line) + ": ";
    switch (layer.kind) {
      case LayerKind::conv: {
        const Conv2dShape shape = conv_shape(layer, n);
        SplitPlan plan = params.conv_plan(layer.name);
        if (place.convs_at_home)  // one chain of a sample split: whole tasks, all on one side
          for (SplitPart &part : plan.parts) part = {part.filters, home_, 1};
        // A whole convolution takes in the ReLU after it, and a 2x2 maxpool after that.
        ConvFusion fusion = ConvFusion::none;
        if (fuse && ConvLayer::is_whole_plan(plan, n) && next_is(spec, i, LayerKind::relu)) {
          fusion = ConvFusion::relu;
          ++i;
          if (next_is(spec, i, LayerKind::maxpool) && spec.layers[i + 1].kernel == 2) {
            fusion = ConvFusion::relu_pool;
            ++i;
          }
        }
        layers_.push_back(std::make_unique<ConvLayer>(shape, params.get(layer.name + ".weight"),
                                                      params.get(layer.name + ".bias"), plan,
                                                      fusion));
        break;
      }
      case LayerKind::relu:
        // A ReLU before a maxpool or after a linear layer is fused into that layer's tasks.
        if (next_is(spec, i, LayerKind::maxpool)) break;
        if (i > 0 && spec.layers[i - 1].kind == LayerKind::linear) break;
        layers_.push_back(std::make_unique<ReluLayer>(batch_shape(batch, layer.in),
                                                      "relu" + std::to_string(layer.line)));
        break;
      case LayerKind::maxpool: {
        if (layer.kernel != 2)
          throw std::invalid_argument(where + "only maxpool 2 is supported, got maxpool " +
                                      std::to_string(layer.kernel));
        const bool fused = i > 0 && spec.layers[i - 1].kind == LayerKind::relu;
        layers_.push_back(std::make_unique<PoolLayer>(
            MaxpoolShape{n, uint32_t(layer.in.c), uint32_t(layer.in.h), uint32_t(layer.in.w)},
            fused, "pool" + std::to_string(layer.line)));
        break;
      }
      case LayerKind::flatten:
        break;  // [N, C, H, W] and [N, C*H*W] are the same buffer
      case LayerKind::linear:
        layers_.push_back(std::make_unique<LinearLayer>(
            LinearShape{n, uint32_t(layer.in.size()), uint32_t(layer.out)},
            params.get(layer.name + ".weight"), params.get(layer.name + ".bias"),
            next_is(spec, i, LayerKind::relu)));
        break;
    }
  }
  if (layers_.empty()) throw std::invalid_argument(spec.source + ": the network has no layers");
  if (fuse && place.pinned_to_cpu_worker())
    chain_ = LayerChain::build(spec, params, batch_, loss_batch_, grad_slot, home_,
                               CudaChain::graph, place.claim_block);
  if (fuse && kind_of(home_) == Where::cuda &&
      (place.convs_at_home || convs_whole_on_cuda(params, spec, n)))
    chain_ = LayerChain::build(spec, params, batch_, loss_batch_, grad_slot, home_, cuda_chain);
  if (!spec.output().flat && spec.output().size() != spec.output().c)
    throw std::invalid_argument(spec.source + ": the network must end in class scores");
  logits_grad_ = Tensor({batch, classes_}, "dlogits");
  for (auto &layer : layers_) {
    layer->set_grad_slot(grad_slot);
    layer->set_where(home_);
  }
}

void Network::forward_logits(const Tensor &input) {
  const Tensor *x = &input;
  for (auto &layer : layers_) {
    layer->forward(*x);
    x = &layer->output();
  }
}

void Network::forward(const Tensor &input, const Tensor &labels, const Tensor &stats) {
  forward_logits(input);
  submit_softmax_xent_forward(logits().handle(), labels.handle(), stats.handle(), loss_shape(),
                              home_);
}

void Network::backward(const Tensor &input, const Tensor &labels) {
  submit_softmax_xent_backward(logits().handle(), labels.handle(), logits_grad_.handle(),
                               loss_shape(), uint32_t(loss_batch_), home_);
  backward_layers(input);
}

void Network::forward_backward(const Tensor &input, const Tensor &labels, const Tensor &stats,
                               const LayerChain::Peers *peers) {
  if (chain_) {
    chain_->submit(input, labels, stats, home_, peers);
    return;
  }
  if (!fuse_) {
    forward(input, labels, stats);
    backward(input, labels);
    return;
  }
  forward_logits(input);
  submit_softmax_xent_train(logits().handle(), labels.handle(), stats.handle(),
                            logits_grad_.handle(), loss_shape(), uint32_t(loss_batch_), home_);
  backward_layers(input);
}

void Network::backward_layers(const Tensor &input) {
  const Tensor *dy = &logits_grad_;
  for (size_t i = layers_.size(); i-- > 0;) {
    const Tensor &x = i == 0 ? input : layers_[i - 1]->output();
    layers_[i]->backward(x, *dy, i > 0);
    dy = &layers_[i]->input_grad();
  }
}

std::vector<std::string> Network::describe() const {
  std::vector<std::string> lines;
  for (const auto &layer : layers_) lines.push_back(layer->describe());
  return lines;
}

}  // namespace starcnn
