#include "model/nn/relu_layer.h"

#include "codelets/relu.h"

namespace starcnn {

ReluLayer::ReluLayer(const std::vector<int> &shape, const std::string &name) {
  output_ = Tensor(shape, name + ".out");
  input_grad_ = Tensor(shape, name + ".dx");
}

void ReluLayer::forward(const Tensor &input) {
  submit_relu_forward(input.handle(), output_.handle(), where_);
}

void ReluLayer::backward(const Tensor &, const Tensor &output_grad, bool need_input_grad) {
  if (need_input_grad)
    submit_relu_backward(output_.handle(), output_grad.handle(), input_grad_.handle(), where_);
}

}  // namespace starcnn
