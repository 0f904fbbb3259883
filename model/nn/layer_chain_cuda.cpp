// A LayerChain's task on a CUDA worker: the layers' CUDA launchers in turn on the worker's stream
// (cuDNN and cuBLAS bound to it), into the chain's scratch buffers, launched one by one or
// replayed as a CUDA graph.
#ifdef STARCNN_USE_CUDA
#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv_block.h"
#include "codelets/linear_backward.h"
#include "codelets/relu.h"
#include "codelets/softmax_xent.h"
#include "codelets/support/cuda_graph_cache.h"
#include "codelets/support/cuda_op_timer.h"
#include "model/nn/layer_chain_walk.h"

#include <starpu_cublas_v2.h>

#include <cstring>
#include <string>

namespace starcnn {
namespace {

std::string conv_name(const char *pass, const Conv2dShape &s) {
  return std::string("conv ") + pass + " " + std::to_string(s.c_in) + "x" + std::to_string(s.h) +
         "x" + std::to_string(s.w) + " -> " + std::to_string(s.c_out) + " k" + std::to_string(s.k);
}
std::string sized_name(const char *op, size_t n) {
  return std::string(op) + " " + std::to_string(n);
}

// Each op's launchers on the worker's stream, timed where `timer` is set (cuda_op_timer.h).
struct CudaKernels {
  cublasHandle_t cublas;
  cudaStream_t stream;
  CudaOpTimer *timer;

  void conv_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                    float *y) {
    TimedOp t(
        timer, [&] { return conv_name("forward", s); }, stream);
    conv2d_forward_cuda(s, x, w, b, y);
  }
  void conv_block_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                          float *y, float *p, int32_t *argmax) {
    TimedOp t(
        timer, [&] { return conv_name(p ? "forward+relu+pool" : "forward+relu", s); }, stream);
    conv_block_forward_cuda(s, x, w, b, y, p, argmax, stream);
  }
  void conv_block_backward(const Conv2dShape &s, const float *x, const float *w, const float *dout,
                           const float *y, const int32_t *argmax, float *dz, float *dw, float *db,
                           float *dx) {
    TimedOp t(
        timer, [&] { return conv_name(argmax ? "backward pool+relu" : "backward relu", s); },
        stream);
    conv_block_backward_cuda(s, x, w, dout, y, argmax, dz, dw, db, dx, stream);
  }
  void relu_forward(const float *x, float *y, size_t n) {
    TimedOp t(
        timer, [&] { return sized_name("relu forward", n); }, stream);
    relu_forward_cuda(x, y, n, stream);
  }
  void maxpool_forward(const float *x, float *p, int32_t *argmax, const MaxpoolShape &s) {
    TimedOp t(
        timer, [&] { return sized_name("maxpool forward", s.out_size()); }, stream);
    maxpool_forward_cuda(x, p, argmax, s, false, stream);
  }
  void linear_forward(const float *x, const float *w, const float *b, float *y,
                      const LinearShape &s) {
    TimedOp t(
        timer, [&] { return sized_name("linear forward", size_t(s.in) * s.out); }, stream);
    linear_forward_cuda(cublas, x, w, b, y, s, false, stream);
  }
  void loss(const float *z, const int32_t *labels, float *stats, float *dz,
            const SoftmaxXentShape &s, uint32_t batch_size) {
    TimedOp t(
        timer, [&] { return std::string("softmax cross-entropy"); }, stream);
    softmax_xent_train_cuda(z, labels, stats, dz, s, batch_size, stream);
  }
  void conv_backward(const Conv2dShape &s, const float *x, const float *w, const float *dy,
                     float *dw, float *db, float *dx) {
    {
      TimedOp t(
          timer, [&] { return conv_name("backward filter+bias", s); }, stream);
      conv2d_backward_filter_cuda(s, x, dy, dw, db, false);
    }
    if (!dx) return;
    TimedOp t(
        timer, [&] { return conv_name("backward data", s); }, stream);
    conv2d_backward_data_cuda(s, w, dy, dx, false);
  }
  void relu_backward(const float *y, const float *dy, float *dx, size_t n) {
    TimedOp t(
        timer, [&] { return sized_name("relu backward", n); }, stream);
    relu_backward_cuda(y, dy, dx, n, stream);
  }
  void maxpool_backward(const float *dp, const int32_t *argmax, float *dx, const MaxpoolShape &s) {
    TimedOp t(
        timer, [&] { return sized_name("maxpool backward", s.out_size()); }, stream);
    maxpool_backward_cuda(dp, argmax, dx, s, stream);
  }
  void linear_backward(const float *x, const float *w, const float *dy, float *dw, float *db,
                       float *dx, const LinearShape &s) {
    TimedOp t(
        timer, [&] { return sized_name("linear backward", size_t(s.in) * s.out); }, stream);
    linear_backward_cuda(cublas, x, w, dy, dw, db, nullptr, nullptr, dx, s, stream);
  }
};

// What a captured graph depends on: the program and every buffer's address but the stats'
// (buffer 2), which the graph does not touch (see below).
std::vector<uint64_t> graph_key(const LayerChain::Program &p, void *buffers[], unsigned count) {
  std::vector<uint64_t> key((sizeof p + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
  std::memcpy(key.data(), &p, sizeof p);
  for (unsigned i = 0; i < count; ++i)
    key.push_back(i == 2 ? 0 : uint64_t(STARPU_VECTOR_GET_PTR(buffers[i])));
  return key;
}

// The chain's pass, after the held update where `update` is given (on the same stream, before
// the graph: the update's arguments change from step to step, the graph does not).
void run_chain(const LayerChain::Program &p, void *buffers[], const ChainUpdateArgs *update) {
  const unsigned scratch = first_scratch_buffer(p);
  float *act = vector_data(buffers[scratch]);
  float *grad = vector_data(buffers[scratch + 1]);
  int32_t *argmax = int32_vector_data(buffers[scratch + 2]);
  // The loss statistics go to the end of the activations first: the task's copy of the stats
  // (a STARPU_REDUX replicate) may move from step to step, the scratch does not.
  float *step_stats = act + p.act_floats;
  const std::vector<LayerParams> params = layer_params(p, buffers);
  // Timing ops needs their events outside any graph: it launches the kernels one by one.
  CudaOpTimer *timer = CudaOpTimer::for_this_thread();
  CudaKernels kernels{starpu_cublas_get_local_handle(), starpu_cuda_get_local_stream(), timer};
  if (update) {
    const std::vector<SgdVector> vectors =
        chain_update_vectors(p, buffers, params, *update, scratch + 3);
    TimedOp t(
        timer, [] { return std::string("sgd update"); }, kernels.stream);
    sgd_update_cuda(vectors.data(), vectors.size(), update->params, kernels.stream);
  }
  const auto launch = [&] {
    zero_fill_cuda(step_stats, kXentStatsSize, kernels.stream);
    walk_layer_chain(p, params.data(), vector_data(buffers[0]), int32_vector_data(buffers[1]),
                     step_stats, act, grad, argmax, kernels);
  };
  if (p.graph && !timer) {
    thread_local CudaGraphCache graphs;
    graphs.run(graph_key(p, buffers, scratch + 3), kernels.stream, launch);
  } else {
    launch();
  }
  add_into_cuda(vector_data(buffers[2]), step_stats, kXentStatsSize, kernels.stream);
  if (timer) timer->collect();
}

}  // namespace

void layer_chain_cuda_task(void *buffers[], void *cl_arg) {
  run_chain(unpack_program(buffers, cl_arg), buffers, nullptr);
}

void layer_chain_cuda_update_task(void *buffers[], void *cl_arg) {
  ChainUpdateArgs update;
  const LayerChain::Program p = unpack_program(buffers, cl_arg, nullptr, &update);
  run_chain(p, buffers, &update);
}

}  // namespace starcnn
#endif
