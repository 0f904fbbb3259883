// Max pooling 2x2, stride 2, no padding, over X [n, C, H, W] -> P [n, C, H/2, W/2] (floor: an odd
// last row or column is dropped, as PyTorch's default). The forward also writes, for every output,
// the flat index h * W + w of its maximum inside its input plane (int32, PyTorch's convention);
// ties go to the first maximum in scan order, a NaN wins over numbers. The backward routes each
// dP to that index: it needs neither X nor P, and CPU and CUDA agree on ties by construction.
// The fused ReLU + maxpool forward gives P = max(0, window maximum), which is maxpool(relu(X)); a
// window whose maximum is not positive gets P = 0 and argmax -1, so the same backward gives it no
// gradient, as ReLU's would (a window holding a NaN also gets 0 there). One task instead of two,
// and no ReLU output to keep for the backward.
// Any handle may be a sub-handle (a sub-batch) of a larger tensor; shape.n counts its samples.
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

struct MaxpoolShape {
  uint32_t n;         // samples in this (sub-)batch
  uint32_t channels;  // C
  uint32_t height;    // H of the input
  uint32_t width;     // W of the input

  // constexpr so that CUDA kernels may call them too.
  constexpr uint32_t out_height() const { return height / 2; }
  constexpr uint32_t out_width() const { return width / 2; }
  constexpr size_t planes() const { return size_t(n) * channels; }
  constexpr size_t in_size() const { return planes() * height * width; }
  constexpr size_t out_size() const { return planes() * out_height() * out_width(); }
};

// relu: the fused ReLU + maxpool forward.
void maxpool_forward_cpu(const float *x, float *p, int32_t *argmax, const MaxpoolShape &shape,
                         bool relu = false);
// dX is fully written: dP at each argmax (none where it is -1), zero everywhere else.
void maxpool_backward_cpu(const float *dp, const int32_t *argmax, float *dx,
                          const MaxpoolShape &shape);
#ifdef STARCNN_USE_CUDA
void maxpool_forward_cuda(const float *x, float *p, int32_t *argmax, const MaxpoolShape &shape,
                          bool relu, cudaStream_t stream);
// The fused ReLU + maxpool forward of X + bias[channel]: a convolution's bias, added here instead
// of in a pass of its own (conv_block.h).
void bias_relu_maxpool_forward_cuda(const float *x, const float *bias, float *p, int32_t *argmax,
                                    const MaxpoolShape &shape, cudaStream_t stream);
void maxpool_backward_cuda(const float *dp, const int32_t *argmax, float *dx,
                           const MaxpoolShape &shape, cudaStream_t stream);
#endif

extern starpu_codelet maxpool_forward_codelet;
extern starpu_codelet relu_maxpool_forward_codelet;
extern starpu_codelet maxpool_backward_codelet;

// x: float vector of shape.in_size(); p: float vector and argmax: int32 vector (element size 4),
// both of shape.out_size().
void submit_maxpool_forward(starpu_data_handle_t x, starpu_data_handle_t p,
                            starpu_data_handle_t argmax, const MaxpoolShape &shape,
                            Where where = Where::any, int priority = 0);
// maxpool(relu(x)) in one task, with the buffers of submit_maxpool_forward.
void submit_relu_maxpool_forward(starpu_data_handle_t x, starpu_data_handle_t p,
                                 starpu_data_handle_t argmax, const MaxpoolShape &shape,
                                 Where where = Where::any, int priority = 0);
// dp, argmax: shape.out_size(); dx: shape.in_size(). Also the backward of the fused forward.
void submit_maxpool_backward(starpu_data_handle_t dp, starpu_data_handle_t argmax,
                             starpu_data_handle_t dx, const MaxpoolShape &shape,
                             Where where = Where::any, int priority = 0);

}  // namespace starcnn
