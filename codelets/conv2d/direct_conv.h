// Direct convolutions on the CPU for stride-1 layers with few channels (lenet's), without im2col.
// There the lowering costs as much as the product: lenet's conv1 at 8 samples spent 55 of its
// ~100 us in im2col, and its product (6 filters) is too thin for OpenBLAS's kernels.
//
// Every op works on the input plane "at full width": with the (padded) input row-major at width wp,
// output (oy, ox) is at p = oy * wp + ox, and the input it reads through tap (ky, kx) at
// p + ky * wp + kx. So each tap is one contiguous run of span = (oh - 1) * wp + ow positions, the
// columns ox >= ow in it being thrown away (forward) or zero (backward). The loops keep blocks of
// 16 positions times a few channels in registers.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

#include <cstddef>

namespace starcnn {

// Whether the direct kernel of each op serves `shape`: stride 1, few enough channels (and, for
// the gradients, a shape) where it beats im2col and a GEMM, and scratch needs within
// `scratch_floats` (the im2col buffer the task already has).
bool direct_forward_serves(const Conv2dShape &shape, size_t scratch_floats);
bool direct_filter_grad_serves(const Conv2dShape &shape, size_t scratch_floats);
bool direct_data_grad_serves(const Conv2dShape &shape, size_t scratch_floats);

// The scratch floats the direct kernels of `shape` need (the most of the three ops).
size_t direct_conv_scratch_floats(const Conv2dShape &shape);

// The same contracts as conv2d_forward_cpu, conv2d_backward_filter_cpu (accumulate: add into
// dw and db) and conv2d_backward_data_cpu (accumulate: add into dx); `scratch` holds at least
// direct_conv_scratch_floats(shape) floats, or the floats the op's *_serves accepted. The filter
// gradient is told its scratch's size: it sums as many samples at a time as fit.
void direct_conv_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                         float *y, float *scratch);
void direct_conv_backward_filter(const Conv2dShape &s, const float *x, const float *dy, float *dw,
                                 float *db, float *scratch, size_t scratch_floats, bool accumulate);
void direct_conv_backward_data(const Conv2dShape &s, const float *w, const float *dy, float *dx,
                               float *scratch, bool accumulate);

}  // namespace starcnn
