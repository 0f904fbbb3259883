#include "model/nn/tensor.h"

#include "model/io/safetensors.h"

#include <cstring>
#include <stdexcept>
#include <utility>

namespace starcnn {

namespace {

std::string shape_text(const std::vector<int> &shape) {
  return shape_string(std::vector<int64_t>(shape.begin(), shape.end()));
}

}  // namespace

Tensor::Tensor(std::vector<int> shape, const std::string &name, ElementType type)
    : shape_(std::move(shape)), type_(type) {
  size_ = 1;
  for (int d : shape_) {
    if (d <= 0) throw std::invalid_argument("tensor " + name + ": bad shape " + shape_text(shape_));
    size_ *= size_t(d);
  }
  const size_t bytes = size_ * 4;
  if (starpu_malloc(&data_, bytes) != 0)
    throw std::runtime_error("tensor " + name + ": cannot allocate " + std::to_string(bytes) +
                             " bytes");
  std::memset(data_, 0, bytes);
  starpu_vector_data_register(&handle_, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data_),
                              static_cast<uint32_t>(size_), 4);
  starpu_data_set_name(handle_, name.c_str());
}

Tensor::~Tensor() {
  release();
}

Tensor::Tensor(Tensor &&other) noexcept {
  *this = std::move(other);
}

Tensor &Tensor::operator=(Tensor &&other) noexcept {
  if (this != &other) {
    release();
    shape_ = std::move(other.shape_);
    size_ = std::exchange(other.size_, 0);
    type_ = other.type_;
    data_ = std::exchange(other.data_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Tensor::release() {
  if (handle_) starpu_data_unregister(handle_);
  if (data_) starpu_free(data_);
  handle_ = nullptr;
  data_ = nullptr;
}

namespace {

template <typename T>
std::vector<T> copy_out(starpu_data_handle_t handle, const void *data, size_t n) {
  starpu_data_acquire(handle, STARPU_R);
  std::vector<T> out(n);
  std::memcpy(out.data(), data, n * sizeof(T));
  starpu_data_release(handle);
  return out;
}

template <typename T>
void copy_in(starpu_data_handle_t handle, void *data, const std::vector<T> &values, size_t n) {
  if (values.size() != n)
    throw std::invalid_argument("tensor write of " + std::to_string(values.size()) +
                                " values into " + std::to_string(n) + " elements");
  starpu_data_acquire(handle, STARPU_W);
  std::memcpy(data, values.data(), n * sizeof(T));
  starpu_data_release(handle);
}

}  // namespace

std::vector<float> Tensor::read() const {
  return copy_out<float>(handle_, data_, size_);
}
std::vector<int32_t> Tensor::read_i32() const {
  return copy_out<int32_t>(handle_, data_, size_);
}
void Tensor::write(const std::vector<float> &values) {
  copy_in(handle_, data_, values, size_);
}
void Tensor::write_i32(const std::vector<int32_t> &values) {
  copy_in(handle_, data_, values, size_);
}

}  // namespace starcnn
