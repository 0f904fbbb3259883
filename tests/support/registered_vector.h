// A pinned host float buffer registered with StarPU as a vector, released on destruction.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <vector>

namespace starcnn::testing {

class RegisteredVector {
 public:
  explicit RegisteredVector(const std::vector<float> &values);
  explicit RegisteredVector(size_t n, float fill = 0.0f);
  ~RegisteredVector();
  RegisteredVector(const RegisteredVector &) = delete;
  RegisteredVector &operator=(const RegisteredVector &) = delete;

  starpu_data_handle_t handle() const { return handle_; }
  size_t size() const { return n_; }
  // Brings the data back to RAM (waiting for every task writing it) and copies it out.
  std::vector<float> read();

 private:
  float *data_ = nullptr;
  size_t n_ = 0;
  starpu_data_handle_t handle_ = nullptr;
};

}  // namespace starcnn::testing
