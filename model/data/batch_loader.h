// Copies a mini-batch from the data set in RAM into the input tensors as a CPU task, so the next
// step's batch is prepared by a CPU worker while the current step runs.
#pragma once

#include "codelets/support/codelet_support.h"
#include "model/data/batcher.h"
#include "model/nn/tensor.h"

namespace starcnn {

// images [B, C, H, W] and labels [B] receive the labels.size() samples of batch b from its sample
// `first` on (the whole batch, or one micro-batch of it). The batcher must not change epoch until
// the task has run (wait for the tasks first). The task runs on a CPU worker whatever `where`
// says (it has no CUDA implementation), by default at the highest priority: a step's other tasks
// wait for its batch.
void submit_load_batch(const Batcher &batcher, size_t b, const Tensor &images, const Tensor &labels,
                       size_t first = 0, Where where = Where::any, int priority = STARPU_MAX_PRIO);

}  // namespace starcnn
