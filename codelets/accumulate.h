// Zero-fill and add (dst += src) on float vectors: the init and reduction methods that let several
// tasks sum their contributions into one handle with STARPU_REDUX (input gradients of split
// convolutions, weight gradients of sub-batches).
#pragma once

#include "codelets/codelet_support.h"

#include <cstddef>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

void zero_fill_cpu(float *x, size_t n);
void add_into_cpu(float *dst, const float *src, size_t n);
#ifdef STARCNN_USE_CUDA
void zero_fill_cuda(float *x, size_t n, cudaStream_t stream);
void add_into_cuda(float *dst, const float *src, size_t n, cudaStream_t stream);
#endif

extern starpu_codelet zero_fill_codelet;  // one W buffer
extern starpu_codelet add_into_codelet;   // RW dst, R src

// Makes STARPU_REDUX on `handle` a sum: each worker's private copy starts at zero and copies are
// added together. Call once after registering (or partitioning) the handle. The sum includes the
// handle's value before the REDUX tasks unless it was invalidated (starpu_data_invalidate_submit)
// or zeroed (submit_zero_fill) first.
void set_sum_reduction(starpu_data_handle_t handle);

void submit_zero_fill(starpu_data_handle_t x, Where where = Where::any, int priority = 0);
void submit_add_into(starpu_data_handle_t dst, starpu_data_handle_t src, Where where = Where::any,
                     int priority = 0);

}  // namespace starcnn
