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

void check_cublas(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "starcnn: cuBLAS call %s failed\n", what);
  STARPU_CUBLAS_REPORT_ERROR(status);
}

}  // namespace starcnn
