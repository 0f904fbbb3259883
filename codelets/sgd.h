// One step of torch.optim.SGD (dampening 0, no Nesterov) on float vectors of parameters:
//   g = grad + weight_decay * w
//   buf = first_step ? g : momentum * buf + g      (only when momentum != 0; else buf = g,
//   unstored) w -= lr * buf
// One task updates a whole list of vectors (every parameter of a network that lives on one side,
// each conv part's slice, ...): a training step has one SGD task per device, not one per tensor.
// Optionally it adds a second gradient first, g = (grad + extra) + weight_decay * w, and copies
// the updated w out: a sample split's CPU micro-batches' summed gradients come in, and the weights
// they read go back, as packed vectors (sum_packed.h), each vector at its slice.
#pragma once

#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>
#include <vector>

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

// One vector of an update, in a worker's memory. momentum_buf is unused (may be null) when
// params.momentum == 0.
// extra_grad (added to grad) and w_copy (the updated w written there too) may be null.
struct SgdVector {
  float *w;
  const float *grad;
  float *momentum_buf;
  size_t n;
  const float *extra_grad = nullptr;
  float *w_copy = nullptr;
};

// The update of one vector, and of `count` vectors.
void sgd_update_cpu(float *w, const float *grad, float *momentum_buf, size_t n,
                    const SgdParams &params, const float *extra_grad = nullptr,
                    float *w_copy = nullptr);
void sgd_update_cpu(const SgdVector *vectors, size_t count, const SgdParams &params);
#ifdef STARCNN_USE_CUDA
// A few kernel launches at most (kMaxSgdVectorsPerLaunch vectors each), whatever the sizes.
void sgd_update_cuda(const SgdVector *vectors, size_t count, const SgdParams &params,
                     cudaStream_t stream);
#endif
constexpr size_t kMaxSgdVectorsPerLaunch = 32;

// Variable buffers: per vector w (RW), grad (R) unless the gradients come packed, then
// momentum_buf (RW) unless momentum == 0; then the packed gradients (R), the packed extra
// gradients (R) and the packed copy of w (W) where the task has them.
extern starpu_codelet sgd_update_codelet;

// The handles of one vector; momentum_buf is left out, and may be null, when momentum == 0, and
// grad when the gradients come packed.
struct SgdHandles {
  starpu_data_handle_t w, grad, momentum_buf;
};

// Packed vectors whose consecutive slices match the update's vectors in order (null: none):
// grads replaces the vectors' own gradients (a sample split's CUDA chain writes its gradients
// packed), extra_grads is added to each vector's grad, weights_copy receives each updated w.
struct SgdPacked {
  starpu_data_handle_t extra_grads = nullptr;
  starpu_data_handle_t weights_copy = nullptr;
  starpu_data_handle_t grads = nullptr;
};

// One task updating every vector of `vectors`. Its perf model is keyed on the vectors' sizes only,
// not on the hyper-parameters. Throws std::invalid_argument for an empty list, a grad or buffer
// whose length differs from its w, momentum without a buffer, or a packed vector whose length is
// not the vectors' lengths summed.
void submit_sgd_update(const std::vector<SgdHandles> &vectors, const SgdParams &params,
                       Where where = Where::any, int priority = 0, SgdPacked packed = {});

}  // namespace starcnn
