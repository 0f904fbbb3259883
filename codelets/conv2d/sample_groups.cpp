#include "codelets/conv2d/sample_groups.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace starcnn {
namespace {

size_t min_gemm_columns() {
  static const size_t columns = [] {
    const char *value = std::getenv("STARCNN_GEMM_COLUMNS");
    const long parsed = value ? std::atol(value) : 0;
    return parsed > 0 ? size_t(parsed) : kMinGemmColumns;
  }();
  return columns;
}

}  // namespace

size_t samples_per_gemm(const Conv2dShape &shape) {
  if (shape.pointwise()) return 1;
  const size_t cols = shape.col_cols();
  return std::max<size_t>(1, std::min<size_t>(shape.n, (min_gemm_columns() + cols - 1) / cols));
}

size_t cpu_col_floats(const Conv2dShape &shape) {
  if (!shape.valid()) throw std::invalid_argument("bad conv2d shape");
  if (shape.pointwise()) return 1;
  const size_t g = samples_per_gemm(shape), cols = shape.col_cols();
  return g == 1 ? shape.col_rows() * cols : (shape.col_rows() + shape.c_out) * g * cols;
}

void gather_samples(const float *tensor, size_t g, size_t channels, size_t cols, float *block) {
  for (size_t j = 0; j < g; ++j)
    for (size_t c = 0; c < channels; ++c)
      std::copy_n(tensor + (j * channels + c) * cols, cols, block + (c * g + j) * cols);
}

void scatter_samples(const float *block, size_t g, size_t channels, size_t cols, const float *bias,
                     float *tensor) {
  for (size_t j = 0; j < g; ++j)
    for (size_t c = 0; c < channels; ++c) {
      const float *in = block + (c * g + j) * cols;  // may be `out` itself (g 1: bias only)
      float *out = tensor + (j * channels + c) * cols;
      const float add = bias ? bias[c] : 0.0f;
      for (size_t i = 0; i < cols; ++i) out[i] = in[i] + add;
    }
}

}  // namespace starcnn
