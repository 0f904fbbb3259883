#include "codelets/support/codelet_runtime.h"

#include <cblas.h>
#include <starpu.h>

#include <cstdlib>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>

#include "codelets/conv2d/cudnn_context.h"
#endif

namespace starcnn {

void set_starpu_defaults() {
  // StarPU flushes a history entry when one run deviates by more than 50% from its mean. The first
  // run of a shape is often several times slower (cold caches, a loaded machine), so one outlier
  // would wipe a calibration: keep the entry unless a run is more than 5x off.
  setenv("STARPU_HISTORY_MAX_ERROR", "400", 0);
  // A StarPU built with FxT records a trace unless told not to: only --trace asks for one.
  setenv("STARPU_FXT_TRACE", "0", 0);
}

int cuda_devices_for_starpu() {
  const char *ncuda = std::getenv("STARPU_NCUDA");
  if (ncuda && std::atoi(ncuda) == 0) return 0;
#ifdef STARCNN_USE_CUDA
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess ? devices : 0;
#else
  return 0;
#endif
}

std::string blas_kernel_name() {
  const char *name = openblas_get_corename();
  return name ? name : "unknown";
}

void start_codelet_resources() {
  // OpenBLAS must stay single-threaded inside a task: one CPU worker is one core.
  openblas_set_num_threads(1);
#ifdef STARCNN_USE_CUDA
  starpu_cublas_init();
  start_cudnn_contexts();
#endif
}

void stop_codelet_resources() {
#ifdef STARCNN_USE_CUDA
  stop_cudnn_contexts();
  starpu_cublas_shutdown();
#endif
}

}  // namespace starcnn
