// A packed vector cut into slices that CPU tasks write side by side: StarPU's asynchronous
// partitioning, planned once, submitted and undone around each step's writers. A sample split's
// CPU chains' gradients are summed this way (ParameterSet::submit_sum_grads): one task summing
// every chain's copy of every parameter kept one core busy while the others waited.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <vector>

namespace starcnn {

class PackedSlices {
 public:
  // Plans `slices` slices of the vector `whole` (at least one element each, at most 2^31-1
  // elements in all). Throws std::invalid_argument for no slices or more than elements.
  PackedSlices(starpu_data_handle_t whole, size_t slices);
  // Cleans the plan: before `whole` is unregistered.
  ~PackedSlices();
  PackedSlices(const PackedSlices &) = delete;
  PackedSlices &operator=(const PackedSlices &) = delete;

  size_t count() const { return children_.size(); }
  starpu_data_handle_t slice(size_t s) const { return children_[s]; }
  // Where slice s starts in the whole vector, and its length.
  size_t first(size_t s) const { return first_[s]; }
  size_t length(size_t s) const { return first_[s + 1] - first_[s]; }

  // The slices' tasks go between these two: the whole vector is cut (its earlier readers
  // first) and put back together in RAM (its later readers after).
  void submit_cut();
  void submit_join();

 private:
  starpu_data_handle_t whole_;
  std::vector<starpu_data_handle_t> children_;
  std::vector<size_t> first_;  // count() + 1 offsets
};

}  // namespace starcnn
