#include "codelets/relu.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

__global__ void relu_forward_kernel(const float *x, float *y, size_t n) {
  for (size_t i : grid_stride(n)) y[i] = fmaxf(x[i], 0.0f);
}

__global__ void relu_backward_kernel(const float *y, const float *dy, float *dx, size_t n) {
  for (size_t i : grid_stride(n)) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace

void relu_forward_cuda(const float *x, float *y, size_t n, cudaStream_t stream) {
  relu_forward_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  check_launch("relu_forward");
}

void relu_backward_cuda(const float *y, const float *dy, float *dx, size_t n, cudaStream_t stream) {
  relu_backward_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(y, dy, dx, n);
  check_launch("relu_backward");
}

}  // namespace starcnn
