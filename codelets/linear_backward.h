// A linear layer's whole backward as one task (the fused ReLU's backward, the weight gradients and,
// unless it is the first layer, the input gradient), where linear.h's two backward ops are two
// tasks and the ReLU's a third. A step of lenet on the CPU has one chain of dependent tasks per
// micro-batch, each task paying StarPU's hand-off: five fewer tasks a chain.
//   relu:   dZ = relu_backward(Y, dY)   (else dZ = dY)
//   then    dW = dZ^T X, db = sum over samples of dZ, and dX = dZ W where asked
#pragma once

#include "codelets/linear.h"

namespace starcnn {

// y and dz: the fused ReLU's output and the pre-activation gradient it writes (both null without
// a ReLU); dx null: no input gradient.
void linear_backward_cpu(const float *x, const float *w, const float *dy, float *dw, float *db,
                         const float *y, float *dz, float *dx, const LinearShape &shape);
#ifdef STARCNN_USE_CUDA
void linear_backward_cuda(cublasHandle_t cublas, const float *x, const float *w, const float *dy,
                          float *dw, float *db, const float *y, float *dz, float *dx,
                          const LinearShape &shape, cudaStream_t stream);
#endif

extern starpu_codelet linear_backward_codelet;

// Handles: x, w, dy (R); dw, db (W, overwritten); y (R) and dz (W) for a fused ReLU, else null;
// dx (W), or null for no input gradient.
void submit_linear_backward(starpu_data_handle_t x, starpu_data_handle_t w, starpu_data_handle_t dy,
                            starpu_data_handle_t dw, starpu_data_handle_t db,
                            starpu_data_handle_t y, starpu_data_handle_t dz,
                            starpu_data_handle_t dx, const LinearShape &shape,
                            Where where = Where::any, int priority = 0);

}  // namespace starcnn
