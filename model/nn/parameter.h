// A trainable tensor (conv1.weight, fc2.bias, ...) with its gradient and SGD momentum buffer.
// A split convolution keeps each part's rows (filters) in tensors of their own, so that each part's
// tasks depend only on their own slice; read() and write() see the whole tensor in PyTorch's
// layout.
#pragma once

#include "model/nn/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

class Parameter {
 public:
  // `part_rows` cuts dimension 0 (filters or output features); empty means one part.
  Parameter(std::string name, std::vector<int> shape, std::vector<int> part_rows = {});

  const std::string &name() const { return name_; }
  const std::vector<int> &shape() const { return shape_; }
  size_t size() const;
  size_t part_count() const { return values_.size(); }
  const std::vector<int> &part_rows() const { return part_rows_; }
  Tensor &value(size_t part) { return values_[part]; }
  // The gradient of a part: slot 0 is the one the update reads; the micro-batches of a step each
  // write a slot of their own, which the step adds into slot 0 (ParameterSet::submit_sum_grads).
  Tensor &grad(size_t part, size_t slot = 0) {
    return slot == 0 ? grads_[part] : slot_grads_[slot - 1][part];
  }
  size_t grad_slots() const { return 1 + slot_grads_.size(); }
  // Makes slots 1 .. count-1 (at least the ones there are: never fewer).
  void add_grad_slots(size_t count);
  Tensor &momentum(size_t part) { return momenta_[part]; }

  // Whole tensors, row-major in the full shape (waits for the tasks writing them).
  std::vector<float> read() const;
  void write(const std::vector<float> &values);
  std::vector<float> read_momentum() const;
  void write_momentum(const std::vector<float> &values);

 private:
  std::string name_;
  std::vector<int> shape_;
  std::vector<int> part_rows_;
  std::vector<Tensor> values_, grads_, momenta_;
  std::vector<std::vector<Tensor>> slot_grads_;  // [slot - 1][part]
};

}  // namespace starcnn
