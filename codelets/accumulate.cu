#include "codelets/accumulate.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

__global__ void add_into_kernel(float *dst, const float *src, size_t n) {
  for (size_t i : grid_stride(n)) dst[i] += src[i];
}

}  // namespace

void add_all_cuda(float *dst, const float *const *srcs, size_t count, size_t n,
                  cudaStream_t stream) {
  // A launch per source: a step sums a few micro-batches' gradients, and the launches queue on
  // the worker's stream without waiting.
  for (size_t s = 0; s < count; ++s) add_into_cuda(dst, srcs[s], n, stream);
}

void zero_fill_cuda(float *x, size_t n, cudaStream_t stream) {
  // All-zero bytes are 0.0f; an asynchronous memset on the worker's stream.
  const cudaError_t status = cudaMemsetAsync(x, 0, n * sizeof(float), stream);
  if (status != cudaSuccess) STARPU_CUDA_REPORT_ERROR(status);
}

void add_into_cuda(float *dst, const float *src, size_t n, cudaStream_t stream) {
  add_into_kernel<<<grid_for(n), kThreadsPerBlock, 0, stream>>>(dst, src, n);
  check_launch("add_into");
}

}  // namespace starcnn
