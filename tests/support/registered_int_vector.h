// A pinned host int32 buffer registered with StarPU as a vector of element size 4 (labels,
// argmax indices), released on destruction.
#pragma once

#include <starpu.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace starcnn::testing {

class RegisteredIntVector {
 public:
  explicit RegisteredIntVector(size_t n, int32_t fill = 0) : n_(n) {
    if (starpu_malloc(reinterpret_cast<void **>(&data_), std::max<size_t>(n, 1) * sizeof(int32_t)))
      throw std::runtime_error("starpu_malloc failed");
    std::fill(data_, data_ + n, fill);
    starpu_vector_data_register(&handle_, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data_),
                                static_cast<uint32_t>(n), sizeof(int32_t));
  }
  explicit RegisteredIntVector(const std::vector<int32_t> &values)
      : RegisteredIntVector(values.size()) {
    std::copy(values.begin(), values.end(), data_);
  }
  ~RegisteredIntVector() {
    starpu_data_unregister(handle_);
    starpu_free(data_);
  }
  RegisteredIntVector(const RegisteredIntVector &) = delete;
  RegisteredIntVector &operator=(const RegisteredIntVector &) = delete;

  starpu_data_handle_t handle() const { return handle_; }
  // Brings the data back to RAM (waiting for every task writing it) and copies it out.
  std::vector<int32_t> read() {
    starpu_data_acquire(handle_, STARPU_R);
    std::vector<int32_t> out(data_, data_ + n_);
    starpu_data_release(handle_);
    return out;
  }

 private:
  int32_t *data_ = nullptr;
  size_t n_ = 0;
  starpu_data_handle_t handle_ = nullptr;
};

}  // namespace starcnn::testing
