// im2col, bias and gradient-sum kernels of the GEMM convolution, and its cuBLAS calls.
#include "codelets/conv2d/conv_gemm.h"
#include "codelets/support/cuda_support.h"

#include <cstdlib>
#include <string>

namespace starcnn {
namespace {

// Rows of a sample's im2col matrix with the ones row, and its columns.
struct GemmConvDims {
  size_t rows, rows1, cols;
  explicit GemmConvDims(const Conv2dShape &s)
      : rows(s.col_rows()), rows1(s.col_rows() + 1), cols(s.col_cols()) {}
};

// The partial gradients start 256-byte aligned after the im2col matrices.
size_t partial_offset_floats(const Conv2dShape &s) {
  const GemmConvDims d(s);
  const size_t col = size_t(s.n) * d.rows1 * d.cols;
  return (col + 63) / 64 * 64;
}

// What im2col reads of the shape (Conv2dShape's methods are host code).
struct Im2colGeometry {
  uint32_t h, w, k, stride, pad, out_w;
  size_t x_sample;
};

// col[sample][row][column], rows ordered (input channel, ky, kx) as the weights; row `rows` is
// ones.
__global__ void im2col_kernel(const float *x, float *col, Im2colGeometry g, size_t rows,
                              size_t cols, size_t total) {
  const uint32_t kk = g.k * g.k;
  for (size_t i : grid_stride(total)) {
    const size_t p = i % cols, r = (i / cols) % (rows + 1), sample = i / (cols * (rows + 1));
    float value = 1.0f;
    if (r < rows) {
      const uint32_t ci = uint32_t(r / kk), ky = uint32_t(r % kk) / g.k,
                     kx = uint32_t(r % kk) % g.k;
      const int iy = int(uint32_t(p) / g.out_w * g.stride + ky) - int(g.pad);
      const int ix = int(uint32_t(p) % g.out_w * g.stride + kx) - int(g.pad);
      value = iy >= 0 && iy < int(g.h) && ix >= 0 && ix < int(g.w)
                  ? x[sample * g.x_sample + (size_t(ci) * g.h + size_t(iy)) * g.w + size_t(ix)]
                  : 0.0f;
    }
    col[i] = value;
  }
}

__global__ void add_bias_kernel(float *y, const float *b, size_t cols, uint32_t c_out,
                                size_t total) {
  for (size_t i : grid_stride(total)) y[i] += b[(i / cols) % c_out];
}

// partial[sample][c * rows1 + r] summed over samples into dw[c][r] (r < rows) and db[c].
__global__ void sum_gradients_kernel(const float *partial, float *dw, float *db, size_t rows,
                                     uint32_t c_out, uint32_t samples, bool accumulate) {
  const size_t per_sample = (rows + 1) * c_out;
  for (size_t i : grid_stride(per_sample)) {
    float sum = 0.0f;
    for (uint32_t n = 0; n < samples; ++n) sum += partial[n * per_sample + i];
    const size_t c = i / (rows + 1), r = i % (rows + 1);
    float *out = r < rows ? dw + c * rows + r : db + c;
    *out = accumulate ? *out + sum : sum;
  }
}

void im2col(const Conv2dShape &s, const float *x, float *col, cudaStream_t stream) {
  const GemmConvDims d(s);
  const size_t total = size_t(s.n) * d.rows1 * d.cols;
  const Im2colGeometry g{s.h, s.w, s.k, s.stride, s.pad, s.out_w(), s.x_sample()};
  im2col_kernel<<<grid_for(total), kThreadsPerBlock, 0, stream>>>(x, col, g, d.rows, d.cols, total);
  check_launch("im2col_kernel");
}

cublasComputeType_t compute_type(bool tf32) {
  return tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

}  // namespace

bool use_gemm_conv(const Conv2dShape &shape) {
  static const bool enabled = [] {
    const char *value = std::getenv("STARCNN_CONV_GEMM");
    return value == nullptr || std::string(value) != "0";
  }();
  return enabled && shape.col_rows() <= kGemmConvMaxRows;
}

size_t gemm_conv_workspace_bytes(const Conv2dShape &s) {
  const GemmConvDims d(s);
  return (partial_offset_floats(s) + size_t(s.n) * d.rows1 * s.c_out) * sizeof(float);
}

void gemm_conv_forward(cublasHandle_t cublas, const Conv2dShape &s, const float *x, const float *w,
                       const float *b, float *y, void *workspace, bool tf32, cudaStream_t stream) {
  const GemmConvDims d(s);
  float *col = static_cast<float *>(workspace);
  im2col(s, x, col, stream);
  // Column-major, per sample: Y^T [cols x c_out] = col^T [cols x rows] * W^T [rows x c_out].
  const float one = 1.0f, zero = 0.0f;
  check_cublas(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, int(d.cols),
                                          int(s.c_out), int(d.rows), &one, col, CUDA_R_32F,
                                          int(d.cols), (long long)(d.rows1 * d.cols), w, CUDA_R_32F,
                                          int(d.rows), 0, &zero, y, CUDA_R_32F, int(d.cols),
                                          (long long)(size_t(s.c_out) * d.cols), int(s.n),
                                          compute_type(tf32), CUBLAS_GEMM_DEFAULT),
               "convolution forward GEMM");
  const size_t total = s.y_count();
  add_bias_kernel<<<grid_for(total), kThreadsPerBlock, 0, stream>>>(y, b, d.cols, s.c_out, total);
  check_launch("add_bias_kernel");
}

void gemm_conv_backward_filter(cublasHandle_t cublas, const Conv2dShape &s, const float *x,
                               const float *dy, float *dw, float *db, bool accumulate,
                               void *workspace, bool tf32, cudaStream_t stream) {
  const GemmConvDims d(s);
  float *col = static_cast<float *>(workspace);
  float *partial = col + partial_offset_floats(s);
  im2col(s, x, col, stream);
  // Per sample: [rows + 1 x c_out] = col [rows + 1 x cols] * dY^T [cols x c_out]; the ones row
  // gives the bias's gradient.
  const float one = 1.0f, zero = 0.0f;
  check_cublas(
      cublasGemmStridedBatchedEx(
          cublas, CUBLAS_OP_T, CUBLAS_OP_N, int(d.rows1), int(s.c_out), int(d.cols), &one, col,
          CUDA_R_32F, int(d.cols), (long long)(d.rows1 * d.cols), dy, CUDA_R_32F, int(d.cols),
          (long long)(size_t(s.c_out) * d.cols), &zero, partial, CUDA_R_32F, int(d.rows1),
          (long long)(d.rows1 * s.c_out), int(s.n), compute_type(tf32), CUBLAS_GEMM_DEFAULT),
      "convolution weight-gradient GEMM");
  const size_t per_sample = d.rows1 * s.c_out;
  sum_gradients_kernel<<<grid_for(per_sample), kThreadsPerBlock, 0, stream>>>(
      partial, dw, db, d.rows, s.c_out, s.n, accumulate);
  check_launch("sum_gradients_kernel");
}

}  // namespace starcnn
