// Helpers for CUDA launchers: grid sizing and launch-error reporting. No synchronisation here:
// launchers run inside StarPU tasks on the worker's stream.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace starcnn {

constexpr int kThreadsPerBlock = 256;

// Enough blocks to cover n elements with a grid-stride loop, capped to keep launches cheap.
inline unsigned grid_for(size_t n) {
  const size_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const size_t cap = 65535;
  return static_cast<unsigned>(blocks == 0 ? 1 : (blocks < cap ? blocks : cap));
}

#ifdef __CUDACC__
// The indices of [0, n) that the calling thread handles in a grid-stride loop, for kernels
// launched with grid_for(n) blocks:
//   for (size_t i : grid_stride(n)) y[i] = f(x[i]);
// With threads_per_index > 1, groups of that many adjacent threads (a warp, say) share each index.
class GridStride {
 public:
  struct Iterator {
    size_t index, step;
    __device__ size_t operator*() const { return index; }
    __device__ Iterator &operator++() {
      index += step;
      return *this;
    }
    __device__ bool operator!=(const Iterator &end) const { return index < end.index; }
  };

  __device__ GridStride(size_t n, size_t first, size_t step) : n_(n), first_(first), step_(step) {}
  __device__ Iterator begin() const { return {first_, step_}; }
  __device__ Iterator end() const { return {n_, step_}; }

 private:
  size_t n_, first_, step_;
};

__device__ inline GridStride grid_stride(size_t n, unsigned threads_per_index = 1) {
  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t threads = size_t(gridDim.x) * blockDim.x;
  return GridStride(n, thread / threads_per_index, threads / threads_per_index);
}
#endif

// Aborts through StarPU's reporter if the last launch failed: a broken kernel must not pass
// silently.
void check_launch(const char *kernel);
// Aborts through StarPU's reporter, naming `what`, when a cuBLAS call failed.
void check_cublas(cublasStatus_t status, const char *what);

}  // namespace starcnn
