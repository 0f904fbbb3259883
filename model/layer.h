// One layer of the network as a task flow: forward() and backward() only submit StarPU tasks and
// return at once; StarPU orders them by their data.
#pragma once

#include "codelets/sgd.h"
#include "model/parameter.h"
#include "model/tensor.h"

#include <string>
#include <vector>

namespace starcnn {

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string describe() const = 0;
  // Submits the tasks computing output() from `input` ([batch, ...] of the previous layer).
  virtual void forward(const Tensor &input) = 0;
  // Submits the tasks computing the parameter gradients and, if `need_input_grad`, input_grad(),
  // from `input` (as in forward) and `output_grad` (the gradient of output()).
  virtual void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) = 0;
  virtual const Tensor &output() const = 0;
  virtual const Tensor &input_grad() const = 0;
};

}  // namespace starcnn
