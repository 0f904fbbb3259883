// Convolutions of few im2col rows (c_in * k * k up to kGemmConvMaxRows: a network's first layer,
// on 1 or 3 input channels) on CUDA as im2col and one batched cuBLAS GEMM, forward and weight
// gradients. cuDNN's algorithms spend most of their time on such a layer's few channels: wide's
// first layer took 0.26 ms forward and 0.40 ms for its weight gradients at batch 256 under TF32 on
// the H200, 17% of the step, for 1% of its multiply-adds (perf/results/h200-2026-12-04-g,
// op-times). Backward data (never needed for a first layer) stays cuDNN's. CUDA builds only.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace starcnn {

constexpr size_t kGemmConvMaxRows = 32;

// Whether `shape` takes this path: few rows, and STARCNN_CONV_GEMM not 0 (which keeps cuDNN).
bool use_gemm_conv(const Conv2dShape &shape);

// The workspace the path needs: every sample's im2col matrix with a row of ones (the bias's), and
// each sample's weight gradients before they are summed.
size_t gemm_conv_workspace_bytes(const Conv2dShape &shape);

// Y = conv(X, W) + b, with TF32 tensor cores where `tf32`.
void gemm_conv_forward(cublasHandle_t cublas, const Conv2dShape &shape, const float *x,
                       const float *w, const float *b, float *y, void *workspace, bool tf32,
                       cudaStream_t stream);
// dW, db from X and dY, written or (accumulate) added into.
void gemm_conv_backward_filter(cublasHandle_t cublas, const Conv2dShape &shape, const float *x,
                               const float *dy, float *dw, float *db, bool accumulate,
                               void *workspace, bool tf32, cudaStream_t stream);

}  // namespace starcnn
