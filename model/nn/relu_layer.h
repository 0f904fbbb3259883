// A ReLU that could not be fused into a neighbour: relu_forward(X) -> Y, relu_backward(Y, dY) ->
// dX.
#pragma once

#include "model/nn/layer.h"

namespace starcnn {

class ReluLayer : public Layer {
 public:
  ReluLayer(const std::vector<int> &shape, const std::string &name);
  std::string describe() const override { return "relu"; }
  void forward(const Tensor &input) override;
  void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) override;

 private:
};

}  // namespace starcnn
