#include "codelets/relu.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

__global__ void relu_forward_kernel(const float *x, float *y, size_t n) {
  for (size_t i : grid_stride(n)) y[i] = fmaxf(x[i], 0.0f);
}

// y = max(y + bias[channel], 0) in place over [n, channels, plane]; Index as in maxpool.cu.
template <typename Index>
__global__ void bias_relu_kernel(float *y, const float *bias, uint32_t channels, uint32_t plane,
                                 size_t n) {
  for (size_t i : grid_stride(n)) y[i] = fmaxf(y[i] + bias[Index(i) / plane % channels], 0.0f);
}

__global__ void relu_backward_kernel(const float *y, const float *dy, float *dx, size_t n) {
  for (size_t i : grid_stride(n)) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace

void relu_forward_cuda(const float *x, float *y, size_t n, cudaStream_t stream) {
  relu_forward_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  check_launch("relu_forward");
}

void bias_relu_forward_cuda(float *y, const float *bias, uint32_t channels, uint32_t plane,
                            size_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (n <= size_t(UINT32_MAX))
    bias_relu_kernel<uint32_t>
        <<<grid_for(n), kThreadsPerBlock, 0, stream>>>(y, bias, channels, plane, n);
  else
    bias_relu_kernel<size_t>
        <<<grid_for(n), kThreadsPerBlock, 0, stream>>>(y, bias, channels, plane, n);
  check_launch("bias_relu_forward");
}

void relu_backward_cuda(const float *y, const float *dy, float *dx, size_t n, cudaStream_t stream) {
  relu_backward_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(y, dy, dx, n);
  check_launch("relu_backward");
}

}  // namespace starcnn
