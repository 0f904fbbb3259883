// 3x3 convolutions of stride 1 on the CPU by Winograd's minimal filtering F(2x2, 3x3): each 2x2
// tile of the output comes from a 4x4 tile of the input with 16 products per pair of channels
// instead of 36, as 16 GEMMs (one per point of the 4x4 transform) over a block of tiles. The data
// gradient is the same computation: the forward convolution of dY with the filters flipped and
// transposed, padded by 2 - pad; the weight gradient is F(3x3, 2x2): each 2x2 tile of dY against
// the 4x4 tile of X it met, 16 GEMMs summing over the tiles.
//
// Its working buffers (the transformed filters, a block of tiles before and after its GEMMs) are
// the calling thread's own, sized by the block and the channels, not by the batch: the task's
// im2col scratch is left as it is, and CUDA workers (which never call this) allocate nothing.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

namespace starcnn {

// Input and output channels the GEMMs need to be worth the transforms (lenet's 3 and 6 are not).
constexpr size_t kMinWinogradChannels = 16;

// Whether the Winograd kernels take this shape's forward pass, data and weight gradients: a 3x3
// kernel of stride 1, padding 0 to 2, kMinWinogradChannels or more of input and output, and not
// turned off by STARCNN_WINOGRAD=0 (read once: for comparing against im2col).
bool winograd_forward_serves(const Conv2dShape &shape);
bool winograd_data_grad_serves(const Conv2dShape &shape);
bool winograd_filter_grad_serves(const Conv2dShape &shape);

// Y = X (*) W + b, as conv2d_forward_cpu.
void winograd_forward(const Conv2dShape &shape, const float *x, const float *w, const float *b,
                      float *y);
// dX = the data gradient of Y for dY, as conv2d_backward_data_cpu (accumulate: add into dx).
void winograd_backward_data(const Conv2dShape &shape, const float *w, const float *dy, float *dx,
                            bool accumulate);

// dW and db, as conv2d_backward_filter_cpu (accumulate: add into dw and db).
void winograd_backward_filter(const Conv2dShape &shape, const float *x, const float *dy, float *dw,
                              float *db, bool accumulate);

}  // namespace starcnn
