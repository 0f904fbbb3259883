// A LayerChain's task on a CPU worker: the layers' CPU kernels in turn, with the activations,
// their gradients and the im2col scratch kept per worker thread from task to task.
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv_block.h"
#include "codelets/linear_backward.h"
#include "codelets/relu.h"
#include "codelets/softmax_xent.h"
#include "model/nn/layer_chain_walk.h"

#include <algorithm>

namespace starcnn {
namespace {

struct CpuKernels {
  float *col;  // the im2col scratch, for the largest convolution

  void conv_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                    float *y) {
    conv2d_forward_cpu(s, x, w, b, y, col);
  }
  void conv_block_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                          float *y, float *p, int32_t *argmax) {
    conv_block_forward_cpu(s, x, w, b, y, p, argmax, col);
  }
  void conv_block_backward(const Conv2dShape &s, const float *x, const float *w, const float *dout,
                           const float *y, const int32_t *argmax, float *dz, float *dw, float *db,
                           float *dx) {
    conv_block_backward_cpu(s, x, w, dout, y, argmax, dz, dw, db, dx, col);
  }
  void relu_forward(const float *x, float *y, size_t n) { relu_forward_cpu(x, y, n); }
  void maxpool_forward(const float *x, float *p, int32_t *argmax, const MaxpoolShape &s) {
    maxpool_forward_cpu(x, p, argmax, s);
  }
  void linear_forward(const float *x, const float *w, const float *b, float *y,
                      const LinearShape &s) {
    linear_forward_cpu(x, w, b, y, s, false);
  }
  void loss(const float *z, const int32_t *labels, float *stats, float *dz,
            const SoftmaxXentShape &s, uint32_t batch_size) {
    softmax_xent_train_cpu(z, labels, stats, dz, s, batch_size);
  }
  void conv_backward(const Conv2dShape &s, const float *x, const float *w, const float *dy,
                     float *dw, float *db, float *dx) {
    conv2d_backward_filter_cpu(s, x, dy, dw, db, col, false);
    if (dx) conv2d_backward_data_cpu(s, w, dy, dx, col, false);
  }
  void relu_backward(const float *y, const float *dy, float *dx, size_t n) {
    relu_backward_cpu(y, dy, dx, n);
  }
  void maxpool_backward(const float *dp, const int32_t *argmax, float *dx, const MaxpoolShape &s) {
    maxpool_backward_cpu(dp, argmax, dx, s);
  }
  void linear_backward(const float *x, const float *w, const float *dy, float *dw, float *db,
                       float *dx, const LinearShape &s) {
    linear_backward_cpu(x, w, dy, dw, db, nullptr, nullptr, dx, s);
  }
};

}  // namespace

void layer_chain_cpu_task(void *buffers[], void *cl_arg) {
  const LayerChain::Program p = unpack_program(buffers, cl_arg);
  thread_local std::vector<float> act, grad, col;
  thread_local std::vector<int32_t> argmax;
  act.resize(p.act_floats);
  grad.resize(p.act_floats);
  col.resize(p.col_floats);
  argmax.resize(std::max<uint64_t>(1, p.argmax_ints));
  const std::vector<LayerParams> params = layer_params(p, buffers);
  CpuKernels kernels{col.data()};
  walk_layer_chain(p, params.data(), vector_data(buffers[0]), int32_vector_data(buffers[1]),
                   vector_data(buffers[2]), act.data(), grad.data(), argmax.data(), kernels);
}

}  // namespace starcnn
