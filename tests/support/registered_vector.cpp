#include "tests/support/registered_vector.h"

#include <algorithm>
#include <stdexcept>

namespace starcnn::testing {

RegisteredVector::RegisteredVector(size_t n, float fill) : n_(n) {
  if (starpu_malloc(reinterpret_cast<void **>(&data_), std::max<size_t>(n, 1) * sizeof(float)) != 0)
    throw std::runtime_error("starpu_malloc failed");
  std::fill(data_, data_ + n, fill);
  starpu_vector_data_register(&handle_, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data_),
                              static_cast<uint32_t>(n), sizeof(float));
}

RegisteredVector::RegisteredVector(const std::vector<float> &values)
    : RegisteredVector(values.size()) {
  std::copy(values.begin(), values.end(), data_);
}

RegisteredVector::~RegisteredVector() {
  starpu_data_unregister(handle_);
  starpu_free(data_);
}

std::vector<float> RegisteredVector::read() {
  starpu_data_acquire(handle_, STARPU_R);
  std::vector<float> out(data_, data_ + n_);
  starpu_data_release(handle_);
  return out;
}

}  // namespace starcnn::testing
