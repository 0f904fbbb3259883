// A convolution split by its plan into parts of filters, each part its own tasks:
//   forward   conv2d_forward[p](X, W_p, b_p) -> Y_p, then merge(Y_1..Y_k) -> Y
//   backward  split(dY) -> dY_p, conv2d_backward_filter[p](X, dY_p) -> dW_p, db_p,
//             conv2d_backward_data[p](W_p, dY_p) summed into dX by STARPU_REDUX
// A whole (one-part) convolution has no merge or split.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"
#include "model/nn/layer.h"
#include "partition/split_plan.h"

namespace starcnn {

class ConvLayer : public Layer {
 public:
  // weight [C, C_in, K, K] and bias [C] are cut into parts as the plan says (see parts_of()).
  ConvLayer(const Conv2dShape &whole, Parameter &weight, Parameter &bias,
            const std::vector<Where> &part_where);

  std::string describe() const override;
  void forward(const Tensor &input) override;
  void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) override;
  const Tensor &output() const override { return output_; }
  const Tensor &input_grad() const override { return input_grad_; }

 private:
  Conv2dShape part_shape(size_t p) const;
  Conv2dShape whole_;
  Parameter &weight_, &bias_;
  std::vector<Where> part_where_;
  std::vector<Tensor> part_outputs_, part_output_grads_;
  Tensor output_, input_grad_;
};

// How a plan's parts become tasks: a part of F filters cut into T tasks becomes min(T, F) parts of
// about F/T filters each (the CPU share is cut by filters, one task per CPU worker).
struct ConvParts {
  std::vector<int> filters;
  std::vector<Where> where;
};
ConvParts parts_of(const SplitPlan &plan);

}  // namespace starcnn
