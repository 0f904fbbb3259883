#include "codelets/conv2d/cudnn_context.h"

#include "codelets/conv2d/conv_bias_grad.h"
#include "codelets/conv2d/conv_gemm.h"
#include "codelets/conv2d/conv_math.h"

#include <cuda_runtime.h>
#include <starpu.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace starcnn {
namespace {

// Indexed by StarPU worker id; each worker only touches its own entry, so no lock is needed.
std::vector<std::unique_ptr<CudnnWorkerContext>> contexts;

// Algorithms needing more workspace than this are skipped.
constexpr size_t kMaxWorkspaceBytes = size_t(1) << 30;

// Plain FP32 (FMA) arithmetic keeps CUDA results within float rounding of the CPU ones; --math
// tf32 lets cuDNN use TF32 tensor cores instead (conv_math.h).
bool allow_tensor_math() {
  return conv_math() == ConvMath::tf32;
}

void create_context(void *) {
  auto context = std::make_unique<CudnnWorkerContext>();
  check_cudnn(cudnnCreate(&context->handle), "cudnnCreate");
  check_cudnn(cudnnSetStream(context->handle, starpu_cuda_get_local_stream()), "cudnnSetStream");
  contexts[starpu_worker_get_id_check()] = std::move(context);
}

void destroy_descriptors(CudnnConv2dDescriptors &desc) {
  check_cudnn(cudnnDestroyTensorDescriptor(desc.x), "destroy x descriptor");
  check_cudnn(cudnnDestroyTensorDescriptor(desc.y), "destroy y descriptor");
  check_cudnn(cudnnDestroyTensorDescriptor(desc.bias), "destroy bias descriptor");
  check_cudnn(cudnnDestroyFilterDescriptor(desc.w), "destroy filter descriptor");
  check_cudnn(cudnnDestroyConvolutionDescriptor(desc.conv), "destroy convolution descriptor");
}

void destroy_context(void *) {
  std::unique_ptr<CudnnWorkerContext> &context = contexts[starpu_worker_get_id_check()];
  if (!context) return;
  cudaStreamSynchronize(starpu_cuda_get_local_stream());
  for (auto &entry : context->conv2d_descriptors) destroy_descriptors(entry.second);
  if (context->workspace) cudaFree(context->workspace);
  check_cudnn(cudnnDestroy(context->handle), "cudnnDestroy");
  context.reset();
}

void make_descriptors(const Conv2dShape &s, CudnnConv2dDescriptors &desc) {
  const int n = int(s.n), c = int(s.c_in), f = int(s.c_out), k = int(s.k);
  check_cudnn(cudnnCreateTensorDescriptor(&desc.x), "create x descriptor");
  check_cudnn(cudnnCreateTensorDescriptor(&desc.y), "create y descriptor");
  check_cudnn(cudnnCreateTensorDescriptor(&desc.bias), "create bias descriptor");
  check_cudnn(cudnnCreateFilterDescriptor(&desc.w), "create filter descriptor");
  check_cudnn(cudnnCreateConvolutionDescriptor(&desc.conv), "create convolution descriptor");
  check_cudnn(cudnnSetTensor4dDescriptor(desc.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c,
                                         int(s.h), int(s.w)),
              "set x descriptor");
  check_cudnn(cudnnSetTensor4dDescriptor(desc.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, f,
                                         int(s.out_h()), int(s.out_w())),
              "set y descriptor");
  check_cudnn(
      cudnnSetTensor4dDescriptor(desc.bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, f, 1, 1),
      "set bias descriptor");
  check_cudnn(cudnnSetFilter4dDescriptor(desc.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, f, c, k, k),
              "set filter descriptor");
  // Cross-correlation, as every CNN framework (and the CPU kernels) compute it.
  check_cudnn(cudnnSetConvolution2dDescriptor(desc.conv, int(s.pad), int(s.pad), int(s.stride),
                                              int(s.stride), 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT),
              "set convolution descriptor");
}

// The first answer (fastest measured, or best guessed) that works, fits the workspace cap and
// (unless allowed) avoids tensor-core math; never one that converts FP32 data to FP16 (TF32 is as
// far as tf32 goes). Returns its algorithm, math type and workspace need.
template <typename Perf, typename Algo>
void pick(const Perf *perf, int count, const char *op, Algo &algo, cudnnMathType_t &math,
          size_t &bytes) {
  const bool tensor_ok = allow_tensor_math();
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspaceBytes) continue;
    if (perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;
    if (!tensor_ok && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH)
      continue;
    algo = perf[i].algo;
    math = tensor_ok ? perf[i].mathType : CUDNN_FMA_MATH;
    bytes = perf[i].memory;
    return;
  }
  std::fprintf(stderr, "starcnn: cuDNN offers no usable %s algorithm\n", op);
  STARPU_ABORT();
}

// cuDNN's heuristics guess each shape's algorithms, or cudnnFind times them once per shape and
// worker, outside any task (it allocates its own buffers), as PyTorch's cudnn.benchmark. By default
// strict FP32 math times them and TF32 guesses: on the H200 timing took wide's FP32 step from 3.03
// / 9.05 ms to 1.86 / 5.76 (batch 64 / 256) and lenet's not at all, and changed no TF32 step
// (perf/results/h200-2026-12-04-f). STARCNN_CUDNN_FIND=1 times in both maths, 0 in neither.
bool measure_algorithms() {
  const char *value = std::getenv("STARCNN_CUDNN_FIND");
  if (value == nullptr || *value == '\0') return !allow_tensor_math();
  return std::string(value) != "0";
}

void choose_algorithms(cudnnHandle_t handle, CudnnConv2dDescriptors &desc, size_t &workspace) {
  constexpr int kMax = 16;
  int count = 0;
  size_t bytes = 0;
  const bool measure = measure_algorithms();
  // Heuristics answer for the math type set on the descriptor.
  check_cudnn(cudnnSetConvolutionMathType(
                  desc.conv, allow_tensor_math() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
              "set math type");
  cudnnConvolutionFwdAlgoPerf_t fwd[kMax];
  check_cudnn(measure ? cudnnFindConvolutionForwardAlgorithm(handle, desc.x, desc.w, desc.conv,
                                                             desc.y, kMax, &count, fwd)
                      : cudnnGetConvolutionForwardAlgorithm_v7(handle, desc.x, desc.w, desc.conv,
                                                               desc.y, kMax, &count, fwd),
              "forward algorithm search");
  pick(fwd, count, "forward", desc.forward_algo, desc.forward_math, bytes);
  workspace = bytes;
  cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[kMax];
  check_cudnn(measure ? cudnnFindConvolutionBackwardFilterAlgorithm(
                            handle, desc.x, desc.y, desc.conv, desc.w, kMax, &count, bwd_filter)
                      : cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                            handle, desc.x, desc.y, desc.conv, desc.w, kMax, &count, bwd_filter),
              "backward filter algorithm search");
  pick(bwd_filter, count, "backward filter", desc.backward_filter_algo, desc.backward_filter_math,
       bytes);
  workspace = std::max(workspace, bytes);
  cudnnConvolutionBwdDataAlgoPerf_t bwd_data[kMax];
  check_cudnn(measure ? cudnnFindConvolutionBackwardDataAlgorithm(handle, desc.w, desc.y, desc.conv,
                                                                  desc.x, kMax, &count, bwd_data)
                      : cudnnGetConvolutionBackwardDataAlgorithm_v7(
                            handle, desc.w, desc.y, desc.conv, desc.x, kMax, &count, bwd_data),
              "backward data algorithm search");
  pick(bwd_data, count, "backward data", desc.backward_data_algo, desc.backward_data_math, bytes);
  workspace = std::max(workspace, bytes);
}

// Outside any task: waits for the worker's stream before replacing a workspace it may be using.
void grow_workspace(CudnnWorkerContext &context, size_t bytes) {
  if (bytes <= context.workspace_size) return;
  cudaError_t status = cudaStreamSynchronize(starpu_cuda_get_local_stream());
  if (status == cudaSuccess && context.workspace) status = cudaFree(context.workspace);
  context.workspace = nullptr;
  context.workspace_size = 0;
  if (status == cudaSuccess) status = cudaMalloc(&context.workspace, bytes);
  if (status != cudaSuccess) STARPU_CUDA_REPORT_ERROR(status);
  context.workspace_size = bytes;
}

}  // namespace

void check_cudnn(cudnnStatus_t status, const char *what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::fprintf(stderr, "starcnn: cuDNN %s failed: %s\n", what, cudnnGetErrorString(status));
  STARPU_ABORT();
}

void start_cudnn_contexts() {
  contexts.clear();
  contexts.resize(starpu_worker_get_count());
  starpu_execute_on_each_worker(create_context, nullptr, STARPU_CUDA);
}

void stop_cudnn_contexts() {
  starpu_execute_on_each_worker(destroy_context, nullptr, STARPU_CUDA);
  contexts.clear();
}

void prepare_conv2d_on_this_worker(const Conv2dShape &shape) {
  CudnnWorkerContext &context = this_worker_cudnn();
  if (context.conv2d_descriptors.count(shape)) return;
  CudnnConv2dDescriptors desc;
  make_descriptors(shape, desc);
  size_t workspace = 0;
  choose_algorithms(context.handle, desc, workspace);
  desc.gemm = use_gemm_conv(shape);
  if (desc.gemm) workspace = std::max(workspace, gemm_conv_workspace_bytes(shape));
  if (use_conv_bias_grad_kernels())
    workspace = std::max(workspace, conv_bias_grad_workspace_bytes(shape));
  grow_workspace(context, workspace);
  context.conv2d_descriptors.emplace(shape, desc);
}

CudnnWorkerContext &this_worker_cudnn() {
  const unsigned id = unsigned(starpu_worker_get_id_check());
  STARPU_ASSERT_MSG(id < contexts.size() && contexts[id],
                    "no cuDNN context on this worker: start_codelet_resources() not called");
  return *contexts[id];
}

const CudnnConv2dDescriptors &this_worker_conv2d_descriptors(const Conv2dShape &s) {
  CudnnWorkerContext &context = this_worker_cudnn();
  const auto found = context.conv2d_descriptors.find(s);
  if (found == context.conv2d_descriptors.end()) {
    std::fprintf(
        stderr,
        "starcnn: no cuDNN descriptors for conv2d n=%u c_in=%u h=%u w=%u c_out=%u k=%u stride=%u "
        "pad=%u: call prepare_conv2d(shape) before submitting\n",
        s.n, s.c_in, s.h, s.w, s.c_out, s.k, s.stride, s.pad);
    STARPU_ABORT();
  }
  return found->second;
}

}  // namespace starcnn
