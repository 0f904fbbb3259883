// Zero-fill and add (dst += src) on float vectors: the init and reduction methods that let several
// tasks sum their contributions into one handle with STARPU_REDUX (input gradients of split
// convolutions, the cross-entropy stats of sub-batches), the one-task sum of several vectors into
// one (the weight gradients of a step's micro-batches), and the GradientAccess choice every
// gradient op offers.
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

// Whether a gradient task overwrites its output (STARPU_W) or adds to it (STARPU_REDUX: several
// tasks summing into one handle whose reduction methods set_sum_reduction() installed). The values
// travel in task arguments: keep them fixed.
enum class GradientAccess : uint32_t { overwrite = 0, accumulate = 1 };

// The access mode a gradient task declares on its output for `access`.
inline starpu_data_access_mode gradient_access_mode(GradientAccess access) {
  return access == GradientAccess::accumulate ? STARPU_REDUX : STARPU_W;
}

void zero_fill_cpu(float *x, size_t n);
void add_into_cpu(float *dst, const float *src, size_t n);
// dst += srcs[0] + ... + srcs[count - 1], each of n elements.
void add_all_cpu(float *dst, const float *const *srcs, size_t count, size_t n);
#ifdef STARCNN_USE_CUDA
void zero_fill_cuda(float *x, size_t n, cudaStream_t stream);
void add_into_cuda(float *dst, const float *src, size_t n, cudaStream_t stream);
void add_all_cuda(float *dst, const float *const *srcs, size_t count, size_t n,
                  cudaStream_t stream);
#endif

extern starpu_codelet zero_fill_codelet;  // one W buffer
extern starpu_codelet add_into_codelet;   // RW dst, R src
extern starpu_codelet add_all_codelet;    // RW dst, then R srcs

// Makes STARPU_REDUX on `handle` a sum: each worker's private copy starts at zero and copies are
// added together, by tasks StarPU submits on the workers of `where`'s kind (any: the scheduler
// picks; CUDA only where there is one CUDA worker, any worker with several). Call once after
// registering (or partitioning) the handle. The sum includes the handle's value before the REDUX
// tasks unless it was invalidated (starpu_data_invalidate_submit) or zeroed (submit_zero_fill)
// first.
void set_sum_reduction(starpu_data_handle_t handle, Where where = Where::any);
// Every codelet set_sum_reduction installs (StarPU submits their tasks, not insert_task).
std::vector<starpu_codelet *> sum_reduction_codelets();
// Of those, the codelets of the reduction's own tasks (the sums); the zero fills are not tasks but
// called by StarPU inside the task that first writes a private copy.
std::vector<starpu_codelet *> sum_reduction_task_codelets();

// Sets every element of `x` to zero (STARPU_W), e.g. before a STARPU_REDUX sum or after the host
// has read one.
void submit_zero_fill(starpu_data_handle_t x, Where where = Where::any, int priority = 0);
// dst += src, element-wise; both vectors have the same length.
void submit_add_into(starpu_data_handle_t dst, starpu_data_handle_t src, Where where = Where::any,
                     int priority = 0);
// dst += the sum of `srcs`, in one task: unlike a STARPU_REDUX sum (a tree of tasks over every
// worker's private copy, with a temporary handle registered per copy), one task whatever the
// count. Throws std::invalid_argument for no srcs or a length that differs from dst's.
void submit_add_all(starpu_data_handle_t dst, const std::vector<starpu_data_handle_t> &srcs,
                    Where where = Where::any, int priority = 0);

}  // namespace starcnn
