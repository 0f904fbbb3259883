// ReLU forward y = max(x, 0) and backward dx = dy where y > 0, on float vectors of equal length.
// Any handle may be a sub-handle (a sub-batch) of a larger tensor.
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

void relu_forward_cpu(const float *x, float *y, size_t n);
void relu_backward_cpu(const float *y, const float *dy, float *dx, size_t n);
#ifdef STARCNN_USE_CUDA
void relu_forward_cuda(const float *x, float *y, size_t n, cudaStream_t stream);
void relu_backward_cuda(const float *y, const float *dy, float *dx, size_t n, cudaStream_t stream);
// A convolution's bias and its ReLU in one pass, in place over Y [n / (channels * plane), channels,
// plane]: Y = max(Y + bias[channel], 0).
void bias_relu_forward_cuda(float *y, const float *bias, uint32_t channels, uint32_t plane,
                            size_t n, cudaStream_t stream);
#endif

extern starpu_codelet relu_forward_codelet;          // buffers: x (R), y (W)
extern starpu_codelet relu_forward_inplace_codelet;  // buffer: x (RW)
extern starpu_codelet relu_backward_codelet;

// x may equal y (in place, then accessed read-write).
void submit_relu_forward(starpu_data_handle_t x, starpu_data_handle_t y, Where where = Where::any,
                         int priority = 0);
void submit_relu_backward(starpu_data_handle_t y, starpu_data_handle_t dy, starpu_data_handle_t dx,
                          Where where = Where::any, int priority = 0);

}  // namespace starcnn
