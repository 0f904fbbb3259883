#include "codelets/codelet_runtime.h"

#include <cblas.h>
#include <starpu.h>

#ifdef STARCNN_USE_CUDA
#include "codelets/cudnn_context.h"
#endif

namespace starcnn {

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
