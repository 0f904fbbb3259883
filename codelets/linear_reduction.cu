#include "codelets/cuda_support.h"
#include "codelets/linear_reduction.h"

namespace starcnn {
namespace {

__global__ void add_kernel(float *dst, const float *src, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] += src[i];
}

}  // namespace

void linear_gradient_zero_cuda(float *x, size_t n, cudaStream_t stream) {
  // All-zero bytes are 0.0f.
  const cudaError_t status = cudaMemsetAsync(x, 0, n * sizeof(float), stream);
  if (status != cudaSuccess) STARPU_CUDA_REPORT_ERROR(status);
}

void linear_gradient_add_cuda(float *dst, const float *src, size_t n, cudaStream_t stream) {
  add_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(dst, src, n);
  check_launch("linear_gradient_add");
}

}  // namespace starcnn
