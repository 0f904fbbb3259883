#include "model/nn/linear_layer.h"

#include "codelets/relu.h"

namespace starcnn {

LinearLayer::LinearLayer(const LinearShape &shape, Parameter &weight, Parameter &bias,
                         bool fused_relu)
    : shape_(shape), weight_(weight), bias_(bias), fused_relu_(fused_relu) {
  output_ = Tensor({int(shape.n), int(shape.out)}, weight.name() + ".out");
  if (fused_relu) pre_relu_grad_ = Tensor({int(shape.n), int(shape.out)}, weight.name() + ".dz");
  input_grad_ = Tensor({int(shape.n), int(shape.in)}, weight.name() + ".dx");
}

std::string LinearLayer::describe() const {
  return "linear " + std::to_string(shape_.in) + "->" + std::to_string(shape_.out) +
         (fused_relu_ ? "+relu" : "");
}

void LinearLayer::forward(const Tensor &input) {
  submit_linear_forward(input.handle(), weight_.value(0).handle(), bias_.value(0).handle(),
                        output_.handle(), shape_, fused_relu_, where_);
}

void LinearLayer::backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) {
  submit_linear_backward(input.handle(), weight_.value(0).handle(), output_grad.handle(),
                         weight_.grad(0, grad_slot_).handle(), bias_.grad(0, grad_slot_).handle(),
                         fused_relu_ ? output_.handle() : nullptr,
                         fused_relu_ ? pre_relu_grad_.handle() : nullptr,
                         need_input_grad ? input_grad_.handle() : nullptr, shape_, where_);
}

}  // namespace starcnn
