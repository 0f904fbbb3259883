// A convolution's bias gradient on CUDA, db[c] = sum over samples and pixels of dY[n, c, :, :], as
// two deterministic kernels: blocks of (channel, run of samples) write partial sums into the
// worker's cuDNN workspace, then one thread per channel adds its partials in order.
// cudnnConvolutionBackwardBias does the same sum; STARCNN_BIAS_GRAD=cudnn keeps it (to compare).
// CUDA builds only.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

#include <cuda_runtime.h>

#include <cstddef>

namespace starcnn {

// Whether conv2d_backward_filter_cuda takes this path (STARCNN_BIAS_GRAD not "cudnn").
bool use_conv_bias_grad_kernels();

// The workspace the partial sums need.
size_t conv_bias_grad_workspace_bytes(const Conv2dShape &shape);

// db = (accumulate ? db : 0) + the sum; workspace holds conv_bias_grad_workspace_bytes(shape).
void conv_bias_grad_cuda(const Conv2dShape &shape, const float *dy, float *db, bool accumulate,
                         void *workspace, cudaStream_t stream);

}  // namespace starcnn
