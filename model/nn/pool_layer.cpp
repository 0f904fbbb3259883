#include "model/nn/pool_layer.h"

namespace starcnn {

PoolLayer::PoolLayer(const MaxpoolShape &shape, bool fused_relu, const std::string &name)
    : shape_(shape), fused_relu_(fused_relu) {
  const std::vector<int> out = {int(shape.n), int(shape.channels), int(shape.out_height()),
                                int(shape.out_width())};
  output_ = Tensor(out, name + ".out");
  argmax_ = Tensor(out, name + ".argmax", ElementType::i32);
  input_grad_ = Tensor({int(shape.n), int(shape.channels), int(shape.height), int(shape.width)},
                       name + ".dx");
}

std::string PoolLayer::describe() const {
  return std::string(fused_relu_ ? "relu+" : "") + "maxpool 2x2";
}

void PoolLayer::forward(const Tensor &input) {
  if (fused_relu_)
    submit_relu_maxpool_forward(input.handle(), output_.handle(), argmax_.handle(), shape_, where_);
  else
    submit_maxpool_forward(input.handle(), output_.handle(), argmax_.handle(), shape_, where_);
}

void PoolLayer::backward(const Tensor &, const Tensor &output_grad, bool need_input_grad) {
  if (need_input_grad)
    submit_maxpool_backward(output_grad.handle(), argmax_.handle(), input_grad_.handle(), shape_,
                            where_);
}

}  // namespace starcnn
