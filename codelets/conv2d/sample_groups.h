// How many samples the CPU's im2col convolutions lower side by side into one matrix, and the
// scratch that takes. A layer with small outputs (wide's 8x8: 64 columns a sample) makes narrow
// GEMMs one sample at a time, whose packing of W (forward, dX) or pass over dW (dW) costs as much
// as their arithmetic; a group of samples makes one GEMM wide enough for the core.
#pragma once

#include <cstddef>

#include "codelets/conv2d/conv2d_shape.h"

namespace starcnn {

// The output columns a group reaches where the batch allows; STARCNN_GEMM_COLUMNS overrides it
// (read once; 1: a sample at a time, to compare).
constexpr size_t kMinGemmColumns = 256;

// Samples per GEMM: enough for kMinGemmColumns columns, at most shape.n; 1 for pointwise shapes
// (they read X directly).
size_t samples_per_gemm(const Conv2dShape &shape);

// Floats of the scratch the CPU kernels of `shape` need: one sample's im2col matrix, or for a group
// of samples their matrices side by side and the group's [c_out, columns] block of Y or dY; 1 for
// pointwise shapes. It grows with n and c_out: a larger shape's scratch serves a smaller one.
size_t cpu_col_floats(const Conv2dShape &shape);

// A group of g samples of a [n, channels, cols] tensor as one [channels, g * cols] block (samples
// side by side), and back, adding bias[channel] (null: nothing) on the way back; with g 1 the block
// may be the tensor itself.
void gather_samples(const float *tensor, size_t g, size_t channels, size_t cols, float *block);
void scatter_samples(const float *block, size_t g, size_t channels, size_t cols, const float *bias,
                     float *tensor);

}  // namespace starcnn
