// 2x2 max pooling, with the ReLU before it fused in when the network has one there:
//   forward  (relu_)maxpool_forward(X) -> P, argmax;  backward  maxpool_backward(dP, argmax) -> dX
#pragma once

#include "codelets/maxpool.h"
#include "model/nn/layer.h"

namespace starcnn {

class PoolLayer : public Layer {
 public:
  PoolLayer(const MaxpoolShape &shape, bool fused_relu, const std::string &name);
  std::string describe() const override;
  void forward(const Tensor &input) override;
  void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) override;

 private:
  MaxpoolShape shape_;
  bool fused_relu_;
  Tensor argmax_;
};

}  // namespace starcnn
