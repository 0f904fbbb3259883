#include "codelets/linear.h"
#include "codelets/support/cuda_support.h"

// cuBLAS is column-major, and a row-major [r, c] matrix is the column-major [c, r] matrix of its
// transpose. So each row-major product C = A B below is computed as C^T = B^T A^T, with operands
// swapped. The handle is StarPU's, already bound to the worker's stream.

namespace starcnn {
namespace {

constexpr int kColumns = 32;   // bias-gradient block: 32 columns wide ...
constexpr int kRowSlices = 8;  // ... and 8 row slices summed in shared memory

__global__ void add_bias_kernel(float *y, const float *b, size_t n, size_t out, bool relu) {
  const size_t total = n * out;
  for (size_t i : grid_stride(total)) {
    const float v = y[i] + b[i % out];
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
}

// db[j] (+)= sum over rows i of dy[i, j]: threads of a warp read adjacent columns.
__global__ void bias_gradient_kernel(const float *dy, float *db, size_t n, size_t out,
                                     bool accumulate) {
  __shared__ float partial[kRowSlices][kColumns];
  const size_t j = blockIdx.x * size_t(kColumns) + threadIdx.x;
  float sum = 0.0f;
  if (j < out)
    for (size_t i = threadIdx.y; i < n; i += kRowSlices) sum += dy[i * out + j];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < out) {
    for (int s = 1; s < kRowSlices; ++s) sum += partial[s][threadIdx.x];
    db[j] = accumulate ? db[j] + sum : sum;
  }
}

}  // namespace

void linear_forward_cuda(cublasHandle_t cublas, const float *x, const float *w, const float *b,
                         float *y, const LinearShape &s, bool relu, cudaStream_t stream) {
  const float one = 1.0f, zero = 0.0f;
  // Y^T [out, n] = W [out, in] X^T [in, n]
  check_cublas(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, int(s.out), int(s.n), int(s.in), &one,
                           w, int(s.in), x, int(s.in), &zero, y, int(s.out)),
               "linear_forward gemm");
  const size_t total = size_t(s.n) * s.out;
  add_bias_kernel<<<grid_for(total), kThreadsPerBlock, 0, stream>>>(y, b, s.n, s.out, relu);
  check_launch("linear_add_bias");
}

void linear_backward_data_cuda(cublasHandle_t cublas, const float *w, const float *dy, float *dx,
                               const LinearShape &s) {
  const float one = 1.0f, zero = 0.0f;
  // dX^T [in, n] = W^T [in, out] dY^T [out, n]
  check_cublas(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, int(s.in), int(s.n), int(s.out), &one,
                           w, int(s.in), dy, int(s.out), &zero, dx, int(s.in)),
               "linear_backward_data gemm");
}

void linear_backward_weights_cuda(cublasHandle_t cublas, const float *x, const float *dy, float *dw,
                                  float *db, const LinearShape &s, bool accumulate,
                                  cudaStream_t stream) {
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  // dW^T [in, out] = X^T [in, n] dY [n, out]
  check_cublas(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, int(s.in), int(s.out), int(s.n), &one,
                           x, int(s.in), dy, int(s.out), &beta, dw, int(s.in)),
               "linear_backward_weights gemm");
  const dim3 block(kColumns, kRowSlices);
  const unsigned blocks = unsigned((s.out + kColumns - 1) / kColumns);
  bias_gradient_kernel<<<blocks, block, 0, stream>>>(dy, db, s.n, s.out, accumulate);
  check_launch("linear_bias_gradient");
}

}  // namespace starcnn
