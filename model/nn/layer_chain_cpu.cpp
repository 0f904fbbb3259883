// A LayerChain's task on a CPU worker: the layers' CPU kernels in turn, with the activations,
// their gradients and the im2col scratch kept per worker thread from task to task.
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv_block.h"
#include "codelets/linear_backward.h"
#include "codelets/relu.h"
#include "codelets/softmax_xent.h"
#include "model/nn/chain_claims.h"
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

// The activations, their gradients, the im2col scratch and the pools' argmax of `p`, kept per
// worker thread from task to task.
struct ChainScratch {
  float *act, *grad;
  int32_t *argmax;
  CpuKernels kernels;
};

ChainScratch chain_scratch(const LayerChain::Program &p) {
  thread_local std::vector<float> act, grad, col;
  thread_local std::vector<int32_t> argmax;
  act.resize(p.act_floats);
  grad.resize(p.act_floats);
  col.resize(p.col_floats);
  argmax.resize(std::max<uint64_t>(1, p.argmax_ints));
  return {act.data(), grad.data(), argmax.data(), CpuKernels{col.data()}};
}

// `p` for a block of n <= p.batch samples: the same buffers' offsets, fewer samples in them.
LayerChain::Program with_batch(const LayerChain::Program &p, uint32_t n) {
  LayerChain::Program q = p;
  q.batch = n;
  q.input_floats = p.input_floats / p.batch * n;
  for (uint32_t i = 0; i < p.ops; ++i) {
    LayerChain::Op &op = q.op[i];
    op.conv.n = op.pool.n = op.linear.n = n;
    op.out_size = p.op[i].out_size / p.batch * n;
  }
  return q;
}

// The chain's pass over its layers, with `params` from the task's buffers.
void run_chain(const LayerChain::Program &p, const std::vector<LayerParams> &params,
               void *buffers[]) {
  ChainScratch s = chain_scratch(p);
  walk_layer_chain(p, params.data(), vector_data(buffers[0]), int32_vector_data(buffers[1]),
                   vector_data(buffers[2]), s.act, s.grad, s.argmax, s.kernels);
}

}  // namespace

void layer_chain_cpu_task(void *buffers[], void *cl_arg) {
  const LayerChain::Program p = unpack_program(buffers, cl_arg);
  run_chain(p, layer_params(p, buffers), buffers);
}

void layer_chain_cpu_update_task(void *buffers[], void *cl_arg) {
  ChainUpdateArgs update;
  const LayerChain::Program p = unpack_program(buffers, cl_arg, nullptr, &update);
  const std::vector<LayerParams> params = layer_params(p, buffers);
  const std::vector<SgdVector> vectors =
      chain_update_vectors(p, buffers, params, update, first_scratch_buffer(p));
  sgd_update_cpu(vectors.data(), vectors.size(), update.params);
  run_chain(p, params, buffers);
}

// A claiming chain (chain_claims.h): blocks of p.batch samples of any chain of its split, each
// through the layers, until the split's blocks are all taken. The first block's gradients go into
// the chain's packed vector, the later ones' into a scratch vector added to it.
void layer_chain_cpu_claims_task(void *buffers[], void *cl_arg) {
  ClaimTicket ticket;
  const LayerChain::Program p = unpack_program(buffers, cl_arg, &ticket);
  STARPU_ASSERT(p.claims && p.packed_grads && ticket.claims && ticket.own < ticket.chains);
  const unsigned grads_buffer = first_scratch_buffer(p) - 1, peers = first_scratch_buffer(p);
  const auto chain_buffer = [&](uint32_t chain, unsigned which) {  // which: 0 images, 1 labels
    if (chain == ticket.own) return buffers[which];
    return buffers[peers + 2 * (chain < ticket.own ? chain : chain - 1) + which];
  };
  std::vector<uint32_t> samples(ticket.chains);
  for (uint32_t c = 0; c < ticket.chains; ++c)
    samples[c] = uint32_t(vector_length(chain_buffer(c, 1)));
  const std::vector<ChainBlock> blocks = chain_blocks(samples, p.batch);
  const uint64_t sample_floats = p.input_floats / p.batch;
  ChainScratch s = chain_scratch(p);
  std::vector<LayerParams> params = layer_params(p, buffers);
  float *grads = vector_data(buffers[grads_buffer]);
  const size_t grad_floats = vector_length(buffers[grads_buffer]);
  thread_local std::vector<float> extra;
  bool first = true;
  for (uint32_t b;
       (b = claim_block(*ticket.claims, ticket.step, uint32_t(blocks.size()))) < blocks.size();) {
    const ChainBlock &block = blocks[b];
    const LayerChain::Program q = block.samples == p.batch ? p : with_batch(p, block.samples);
    walk_layer_chain(q, params.data(),
                     vector_data(chain_buffer(block.chain, 0)) + block.first * sample_floats,
                     int32_vector_data(chain_buffer(block.chain, 1)) + block.first,
                     vector_data(buffers[2]), s.act, s.grad, s.argmax, s.kernels);
    if (!first) {
      for (size_t i = 0; i < grad_floats; ++i) grads[i] += extra[i];
      continue;
    }
    first = false;  // later blocks' gradients at the same offsets in `extra`
    extra.resize(grad_floats);
    for (LayerParams &l : params) {
      l.dw = extra.data() + (l.dw - grads);
      l.db = extra.data() + (l.db - grads);
    }
  }
  if (first) std::fill(grads, grads + grad_floats, 0.0f);  // the slot is summed all the same
}

}  // namespace starcnn
