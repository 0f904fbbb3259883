#include "codelets/support/cuda_support.h"

#include <starpu.h>

#include <cstdio>

namespace starcnn {

void check_launch(const char *kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    std::fprintf(stderr, "starcnn: CUDA kernel %s failed to launch\n", kernel);
    STARPU_CUDA_REPORT_ERROR(status);
  }
}

}  // namespace starcnn
