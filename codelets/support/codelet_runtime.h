// Per-worker resources that codelets need, created once after starpu_init and never inside a task:
// cuBLAS handles (StarPU's own, bound to each CUDA worker's stream) and cuDNN handles.
#pragma once

#include <string>

namespace starcnn {

// Call before starpu_init: StarPU settings the perf models rely on, each only where the user has
// not set it.
void set_starpu_defaults();
// The CUDA devices StarPU will find, read before starpu_init: 0 in a build without CUDA, on a
// machine without a usable GPU, or when STARPU_NCUDA=0.
int cuda_devices_for_starpu();
// The kernel set OpenBLAS chose for this CPU ("Haswell", "SkylakeX", ...; a generic one such as
// "Prescott" on a modern CPU means slow CPU convolutions: set OPENBLAS_CORETYPE). For benchmarks.
std::string blas_kernel_name();

// Call right after starpu_init and before submitting any starcnn task.
void start_codelet_resources();
// Call after the last task has finished and before starpu_shutdown.
void stop_codelet_resources();

}  // namespace starcnn
