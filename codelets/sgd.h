// One step of torch.optim.SGD (dampening 0, no Nesterov) on a float vector of parameters:
//   g = grad + weight_decay * w
//   buf = first_step ? g : momentum * buf + g      (only when momentum != 0; else buf = g,
//   unstored) w -= lr * buf
// Works on any parameter vector (weights or biases), or on one part of a split one.
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

struct SgdParams {
  float lr;
  float momentum;       // 0 disables the momentum buffer
  float weight_decay;   // L2 penalty added to the gradient
  uint32_t first_step;  // nonzero on the first step: the buffer starts as g, like PyTorch's
};

// momentum_buf is unused (may be null) when params.momentum == 0.
void sgd_update_cpu(float *w, const float *grad, float *momentum_buf, size_t n,
                    const SgdParams &params);
#ifdef STARCNN_USE_CUDA
void sgd_update_cuda(float *w, const float *grad, float *momentum_buf, size_t n,
                     const SgdParams &params, cudaStream_t stream);
#endif

extern starpu_codelet sgd_update_codelet;  // buffers: w (RW), grad (R), momentum_buf (RW)
extern starpu_codelet sgd_update_no_momentum_codelet;  // momentum 0: w (RW), grad (R)

// Handles: w (RW), grad (R), momentum_buf (RW; left out, and may be null, when momentum == 0).
// Its perf model is keyed on the vector sizes only, not on the hyper-parameters.
void submit_sgd_update(starpu_data_handle_t w, starpu_data_handle_t grad,
                       starpu_data_handle_t momentum_buf, const SgdParams &params,
                       Where where = Where::any, int priority = 0);

}  // namespace starcnn
