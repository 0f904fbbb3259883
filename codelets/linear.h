// Fully connected layer, as PyTorch's nn.Linear: Y [n, out] = X [n, in] W^T + b, with W [out, in]
// and b [out], all row-major (a flattened NCHW tensor is already X's layout). The forward may fuse
// a ReLU; the backward ops then take the gradient of the pre-activation, which relu_backward(y, dy)
// gives (y > 0 exactly where the pre-activation is > 0).
//
// Backward, split in two ops so that either can run alone (the first layer needs no dX):
//   linear_backward_data:    dX = dY W
//   linear_backward_weights: dW = dY^T X and db = sum over samples of dY
// X, Y, dX and dY may be sub-handles holding a sub-batch of shape.n samples. Several sub-batch
// tasks can contribute to one dW/db through GradientAccess::accumulate (STARPU_REDUX).
#pragma once

#include "codelets/accumulate.h"
#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>

#ifdef STARCNN_USE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace starcnn {

struct LinearShape {
  uint32_t n;    // samples in this (sub-)batch
  uint32_t in;   // input features per sample
  uint32_t out;  // output features per sample
};

void linear_forward_cpu(const float *x, const float *w, const float *b, float *y,
                        const LinearShape &shape, bool relu);
void linear_backward_data_cpu(const float *w, const float *dy, float *dx, const LinearShape &shape);
// accumulate: add to dw and db instead of overwriting them.
void linear_backward_weights_cpu(const float *x, const float *dy, float *dw, float *db,
                                 const LinearShape &shape, bool accumulate);
#ifdef STARCNN_USE_CUDA
void linear_forward_cuda(cublasHandle_t cublas, const float *x, const float *w, const float *b,
                         float *y, const LinearShape &shape, bool relu, cudaStream_t stream);
void linear_backward_data_cuda(cublasHandle_t cublas, const float *w, const float *dy, float *dx,
                               const LinearShape &shape);
void linear_backward_weights_cuda(cublasHandle_t cublas, const float *x, const float *dy, float *dw,
                                  float *db, const LinearShape &shape, bool accumulate,
                                  cudaStream_t stream);
#endif

// Throws std::invalid_argument naming `op` when a dimension of the shape is zero.
void check_linear_shape(const LinearShape &shape, const char *op);

extern starpu_codelet linear_forward_codelet;
extern starpu_codelet linear_backward_data_codelet;
extern starpu_codelet linear_backward_weights_codelet;

// Handles: x (R), w (R), b (R), y (W). relu: y = max(X W^T + b, 0).
void submit_linear_forward(starpu_data_handle_t x, starpu_data_handle_t w, starpu_data_handle_t b,
                           starpu_data_handle_t y, const LinearShape &shape, bool relu = false,
                           Where where = Where::any, int priority = 0);
// Handles: w (R), dy (R), dx (W).
void submit_linear_backward_data(starpu_data_handle_t w, starpu_data_handle_t dy,
                                 starpu_data_handle_t dx, const LinearShape &shape,
                                 Where where = Where::any, int priority = 0);
// Handles: x (R), dy (R), dw and db (W, or REDUX with GradientAccess::accumulate: dw and db need
// set_sum_reduction() from codelets/accumulate.h, once, where the caller wants them summed; their
// value before the first accumulating task is part of the sum, so zero them first with
// submit_zero_fill).
void submit_linear_backward_weights(starpu_data_handle_t x, starpu_data_handle_t dy,
                                    starpu_data_handle_t dw, starpu_data_handle_t db,
                                    const LinearShape &shape,
                                    GradientAccess access = GradientAccess::overwrite,
                                    Where where = Where::any, int priority = 0);

}  // namespace starcnn
