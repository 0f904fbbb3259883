// The shape of one convolution task: a (sub-)batch of n samples through c_out filters of a slice.
// Square kernels, the same stride and zero padding on both axes. It travels as the task's argument,
// so it must stay a plain struct of fixed-size fields (the perf-model footprint hashes its bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>

namespace starcnn {

struct Conv2dShape {
  uint32_t n = 1;      // samples in this (sub-)batch
  uint32_t c_in = 1;   // input channels
  uint32_t h = 1;      // input height
  uint32_t w = 1;      // input width
  uint32_t c_out = 1;  // filters of this slice
  uint32_t k = 1;      // kernel size (k x k)
  uint32_t stride = 1;
  uint32_t pad = 0;

  uint32_t out_h() const { return (h + 2 * pad - k) / stride + 1; }
  uint32_t out_w() const { return (w + 2 * pad - k) / stride + 1; }
  // Elements of X [n, c_in, h, w], W [c_out, c_in, k, k], b [c_out], Y [n, c_out, out_h, out_w].
  size_t x_sample() const { return size_t(c_in) * h * w; }  // floats of one input sample
  size_t x_count() const { return size_t(n) * c_in * h * w; }
  size_t w_count() const { return size_t(c_out) * c_in * k * k; }
  size_t b_count() const { return c_out; }
  size_t y_count() const { return size_t(n) * c_out * out_h() * out_w(); }
  // Rows of one sample's im2col matrix (c_in * k * k) and its columns (out_h * out_w).
  size_t col_rows() const { return size_t(c_in) * k * k; }
  size_t col_cols() const { return size_t(out_h()) * out_w(); }
  // Whether im2col is the identity (1x1 kernel, stride 1, no padding): X serves as its own col.
  bool pointwise() const { return k == 1 && stride == 1 && pad == 0; }
  // True when the kernel fits the padded input and nothing is zero.
  bool valid() const {
    return n > 0 && c_in > 0 && c_out > 0 && k > 0 && stride > 0 && h + 2 * pad >= k &&
           w + 2 * pad >= k;
  }

  auto key() const { return std::make_tuple(n, c_in, h, w, c_out, k, stride, pad); }
  bool operator<(const Conv2dShape &o) const { return key() < o.key(); }
  bool operator==(const Conv2dShape &o) const { return key() == o.key(); }
};

}  // namespace starcnn
