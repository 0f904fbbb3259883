// One layer of the network as a task flow: forward() and backward() only submit StarPU tasks and
// return at once; StarPU orders them by their data.
#pragma once

#include "codelets/accumulate.h"
#include "codelets/sgd.h"
#include "codelets/support/codelet_support.h"
#include "model/nn/parameter.h"
#include "model/nn/tensor.h"

#include <string>
#include <vector>

namespace starcnn {

class Layer {
 public:
  virtual ~Layer() = default;
  // Which gradient slot of its parameters backward() overwrites (Parameter::grad): 0 for the one
  // network of a step, its own for each micro-batch's network (ParameterSet::use_grad_slots).
  void set_grad_slot(size_t slot) { grad_slot_ = slot; }
  // Which kind of worker runs this layer's tasks (a split convolution's parts keep their plan's;
  // its merges follow this).
  void set_where(Where where) { where_ = where; }
  virtual std::string describe() const = 0;
  // Submits the tasks computing output() from `input` ([batch, ...] of the previous layer).
  virtual void forward(const Tensor &input) = 0;
  // Submits the tasks computing the parameter gradients and, if `need_input_grad`, input_grad(),
  // from `input` (as in forward) and `output_grad` (the gradient of output()).
  virtual void backward(const Tensor &input, const Tensor &output_grad, bool need_input_grad) = 0;
  const Tensor &output() const { return output_; }
  const Tensor &input_grad() const { return input_grad_; }

 protected:
  size_t grad_slot_ = 0;
  Where where_ = Where::any;
  Tensor output_, input_grad_;  // made by each layer's constructor
};

}  // namespace starcnn
