// Per-shape set-up of the CUDA convolution codelets, done once outside tasks.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

namespace starcnn {

// On every CUDA worker: picks the cuDNN forward, backward-filter and backward-data algorithms for
// `shape`, caches them with their descriptors, and grows the worker's workspace. Call it for every
// shape (every sub-batch size and slice width) before submitting CUDA-capable conv2d tasks of that
// shape; calling it again is cheap. Does nothing without CUDA workers.
void prepare_conv2d(const Conv2dShape &shape);

}  // namespace starcnn
