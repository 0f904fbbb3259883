// Per-CUDA-worker cuDNN state, built outside tasks: one handle bound to the worker's StarPU stream,
// one workspace, and per convolution shape the descriptors and algorithms chosen by prepare_conv2d.
// Tasks only look these up. CUDA builds only.
#pragma once

#include <cudnn.h>

#include <map>

#include "codelets/conv2d/conv2d_shape.h"

namespace starcnn {

// The descriptors and algorithms of one shape on one worker (only that worker touches them).
struct CudnnConv2dDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t forward_algo{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter_algo{};
  cudnnConvolutionBwdDataAlgo_t backward_data_algo{};
  cudnnMathType_t forward_math{}, backward_filter_math{}, backward_data_math{};
  bool gemm = false;  // forward and weight gradients as im2col and cuBLAS (conv_gemm.h)
};

struct CudnnWorkerContext {
  cudnnHandle_t handle = nullptr;
  void *workspace = nullptr;
  size_t workspace_size = 0;
  std::map<Conv2dShape, CudnnConv2dDescriptors> conv2d_descriptors;
};

// Creates (destroys) the context of every CUDA worker; called by start/stop_codelet_resources.
void start_cudnn_contexts();
void stop_cudnn_contexts();

// Builds the calling CUDA worker's descriptors and algorithms for `shape` (if new) and grows its
// workspace to fit.
void prepare_conv2d_on_this_worker(const Conv2dShape &shape);

// The calling CUDA worker's context and its descriptors for `shape`; missing ones abort with a
// message naming the shape (prepare_conv2d was not called for it).
CudnnWorkerContext &this_worker_cudnn();
const CudnnConv2dDescriptors &this_worker_conv2d_descriptors(const Conv2dShape &shape);

// Aborts through StarPU with `what` when a cuDNN call failed.
void check_cudnn(cudnnStatus_t status, const char *what);

}  // namespace starcnn
