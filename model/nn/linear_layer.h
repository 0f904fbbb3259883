// A fully connected layer, with the ReLU after it fused into its forward:
//   forward   linear_forward(X, W, b) -> Y (max(., 0) when fused)
//   backward  linear_backward: [relu_backward(Y, dY) -> dZ], dW, db from (X, dZ), dX from (W, dZ),
//             in one task (codelets/linear_backward.h)
#pragma once

#include "codelets/linear.h"
#include "codelets/linear_backward.h"
#include "model/nn/layer.h"

namespace starcnn {

class LinearLayer : public Layer {
 public:
  LinearLayer(const LinearShape &shape, Parameter &weight, Parameter &bias, bool fused_relu);
  std::string describe() const override;
  void forward(const Tensor &input) override;
  void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) override;

 private:
  LinearShape shape_;
  Parameter &weight_, &bias_;
  bool fused_relu_;
  Tensor pre_relu_grad_;
};

}  // namespace starcnn
