// A tensor of the network: a pinned host buffer registered with StarPU as a vector handle, with its
// shape. StarPU's coherence decides where the data lives; the host reads it through read().
#pragma once

#include <starpu.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

enum class ElementType { f32, i32 };

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled; `name` shows in StarPU's traces.
  Tensor(std::vector<int> shape, const std::string &name, ElementType type = ElementType::f32);
  ~Tensor();
  Tensor(Tensor &&other) noexcept;
  Tensor &operator=(Tensor &&other) noexcept;
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;

  const std::vector<int> &shape() const { return shape_; }
  int dim(size_t i) const { return shape_.at(i); }
  size_t size() const { return size_; }
  starpu_data_handle_t handle() const { return handle_; }
  bool empty() const { return handle_ == nullptr; }

  // Wait for the tasks writing this tensor, then copy it out / in (host side).
  std::vector<float> read() const;
  std::vector<int32_t> read_i32() const;
  void write(const std::vector<float> &values);
  void write_i32(const std::vector<int32_t> &values);

 private:
  void release();
  std::vector<int> shape_;
  size_t size_ = 0;
  ElementType type_ = ElementType::f32;
  void *data_ = nullptr;
  starpu_data_handle_t handle_ = nullptr;
};

}  // namespace starcnn
