// A whole convolution with the ReLU after it, and the 2x2 maxpool after that where the network has
// one, as one forward task and one backward task (the separate ops are two or three tasks each
// way, each paying StarPU's hand-off):
//   forward   Y = conv(X, W) + b; pool: P, argmax = maxpool(relu(Y)), else Y = relu(Y) in place
//             (on CUDA the bias is added in the ReLU's or pool's kernel, so with a pool Y holds
//             conv(X, W) alone there: only P and argmax are read afterwards)
//   backward  pool: dZ = maxpool_backward(dP, argmax), else dZ = relu_backward(Y, dY); then dW, db
//             from (X, dZ) and, unless it is the first layer, dX from (W, dZ)
// The kernels are conv2d's, maxpool's and relu's own, called in turn in the task.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/maxpool.h"
#include "codelets/support/codelet_support.h"

#include <cstdint>

namespace starcnn {

// The pool that follows the convolution's ReLU (2x2 over its output).
MaxpoolShape conv_block_pool(const Conv2dShape &shape);

// p and argmax null: no pool. col: as conv2d_forward_cpu's.
void conv_block_forward_cpu(const Conv2dShape &shape, const float *x, const float *w,
                            const float *b, float *y, float *p, int32_t *argmax, float *col);
// argmax null: no pool, y is the ReLU's output; dx null: no input gradient.
void conv_block_backward_cpu(const Conv2dShape &shape, const float *x, const float *w,
                             const float *dout, const float *y, const int32_t *argmax, float *dz,
                             float *dw, float *db, float *dx, float *col);
#ifdef STARCNN_USE_CUDA
void conv_block_forward_cuda(const Conv2dShape &shape, const float *x, const float *w,
                             const float *b, float *y, float *p, int32_t *argmax,
                             cudaStream_t stream);
void conv_block_backward_cuda(const Conv2dShape &shape, const float *x, const float *w,
                              const float *dout, const float *y, const int32_t *argmax, float *dz,
                              float *dw, float *db, float *dx, cudaStream_t stream);
#endif

extern starpu_codelet conv_block_forward_codelet;
extern starpu_codelet conv_block_backward_codelet;

// Handles: x, w, b (R); y (W: the convolution's output, relu'd in place without a pool); p and
// argmax (W) for a pool, else null; col: a STARPU_SCRATCH of ColScratch's size (one may serve
// every task of a layer).
void submit_conv_block_forward(starpu_data_handle_t x, starpu_data_handle_t w,
                               starpu_data_handle_t b, starpu_data_handle_t y,
                               starpu_data_handle_t p, starpu_data_handle_t argmax,
                               starpu_data_handle_t col, const Conv2dShape &shape,
                               Where where = Where::any, int priority = 0);
// Handles: x, w (R); dout (R: dP with a pool, else dY); mask (R: argmax with a pool, else the
// forward's y); dz (W, the gradient of the convolution's output); dw, db (W, overwritten); dx (W)
// or null; col as above. pool: whether mask is argmax.
void submit_conv_block_backward(starpu_data_handle_t x, starpu_data_handle_t w,
                                starpu_data_handle_t dout, starpu_data_handle_t mask, bool pool,
                                starpu_data_handle_t dz, starpu_data_handle_t dw,
                                starpu_data_handle_t db, starpu_data_handle_t dx,
                                starpu_data_handle_t col, const Conv2dShape &shape,
                                Where where = Where::any, int priority = 0);

}  // namespace starcnn
