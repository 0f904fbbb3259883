// Softmax cross-entropy over logits Z [n, classes] with int32 labels [n], as PyTorch's
// nn.CrossEntropyLoss with mean reduction, split so that sub-batches add up to the whole batch:
// - forward adds the sub-batch's summed loss and its count of correct predictions (argmax == label,
//   first maximum on ties) into a stats vector {loss sum, correct count} of 2 floats, accessed in
//   STARPU_REDUX mode: sub-batch tasks run in parallel, and the host reads the stats every N steps
//   and divides by the samples seen (counts are exact up to 2^24 samples between resets). Give
//   the stats vector set_sum_reduction() once after registering it, and reset it with
//   submit_zero_fill() (codelets/accumulate.h): the sum adds onto the value it held;
// - backward writes dZ = (softmax(Z) - onehot(label)) / batch_size, with batch_size the WHOLE
//   batch's size, so sub-batch gradients are the full-batch ones.
// Both subtract each row's max before exponentiating. A label outside [0, classes) makes its loss
// and its gradient row NaN, so a bad label cannot pass silently.
#pragma once

#include "codelets/accumulate.h"
#include "codelets/support/codelet_support.h"

#include <cstddef>
#include <cstdint>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace starcnn {

struct SoftmaxXentShape {
  uint32_t n;        // samples (rows) in this (sub-)batch
  uint32_t classes;  // logits per row
};

// Elements of the stats vector: [0] summed loss, [1] count of correct predictions.
constexpr size_t kXentStatsSize = 2;

// Adds this (sub-)batch's loss sum and correct count into stats[0] and stats[1].
void softmax_xent_forward_cpu(const float *z, const int32_t *labels, float *stats,
                              const SoftmaxXentShape &shape);
void softmax_xent_backward_cpu(const float *z, const int32_t *labels, float *dz,
                               const SoftmaxXentShape &shape, uint32_t batch_size);
#ifdef STARCNN_USE_CUDA
void softmax_xent_forward_cuda(const float *z, const int32_t *labels, float *stats,
                               const SoftmaxXentShape &shape, cudaStream_t stream);
void softmax_xent_backward_cuda(const float *z, const int32_t *labels, float *dz,
                                const SoftmaxXentShape &shape, uint32_t batch_size,
                                cudaStream_t stream);
#endif

// Both in one call (a training step's loss: one task instead of two).
void softmax_xent_train_cpu(const float *z, const int32_t *labels, float *stats, float *dz,
                            const SoftmaxXentShape &shape, uint32_t batch_size);
#ifdef STARCNN_USE_CUDA
void softmax_xent_train_cuda(const float *z, const int32_t *labels, float *stats, float *dz,
                             const SoftmaxXentShape &shape, uint32_t batch_size,
                             cudaStream_t stream);
#endif

extern starpu_codelet softmax_xent_forward_codelet;
extern starpu_codelet softmax_xent_backward_codelet;
extern starpu_codelet softmax_xent_train_codelet;

// z: float vector of n * classes; labels: int32 vector (element size 4) of n; stats: float vector
// of kXentStatsSize with set_sum_reduction() installed (see above).
void submit_softmax_xent_forward(starpu_data_handle_t z, starpu_data_handle_t labels,
                                 starpu_data_handle_t stats, const SoftmaxXentShape &shape,
                                 Where where = Where::any, int priority = 0);
// dz: float vector of n * classes, fully written.
void submit_softmax_xent_backward(starpu_data_handle_t z, starpu_data_handle_t labels,
                                  starpu_data_handle_t dz, const SoftmaxXentShape &shape,
                                  uint32_t batch_size, Where where = Where::any, int priority = 0);
// The forward's stats and the backward's dz from one task.
void submit_softmax_xent_train(starpu_data_handle_t z, starpu_data_handle_t labels,
                               starpu_data_handle_t stats, starpu_data_handle_t dz,
                               const SoftmaxXentShape &shape, uint32_t batch_size,
                               Where where = Where::any, int priority = 0);

}  // namespace starcnn
