// Zero and add codelets that let several sub-batch tasks sum their weight gradients into one
// handle through StarPU's STARPU_REDUX mode: each worker's private copy starts at zero (init) and
// the copies are then added pairwise (reduction). They work on any float vector; they are named for
// the linear layer only until they are unified with the convolution's gradient accumulation.
#pragma once

#include "codelets/codelet_support.h"

#include <cstddef>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

void linear_gradient_zero_cpu(float *x, size_t n);
// dst += src
void linear_gradient_add_cpu(float *dst, const float *src, size_t n);
#ifdef STARCNN_USE_CUDA
void linear_gradient_zero_cuda(float *x, size_t n, cudaStream_t stream);
void linear_gradient_add_cuda(float *dst, const float *src, size_t n, cudaStream_t stream);
#endif

extern starpu_codelet linear_gradient_zero_codelet;  // one buffer, W
extern starpu_codelet linear_gradient_add_codelet;   // dst (RW), src (R)

// Makes `gradient` usable in STARPU_REDUX mode with the codelets above.
void enable_linear_gradient_reduction(starpu_data_handle_t gradient);
// Sets `gradient` to zero: STARPU_REDUX adds to the value it finds, so start from here.
void submit_linear_gradient_zero(starpu_data_handle_t gradient, Where where = Where::any,
                                 int priority = 0);

}  // namespace starcnn
