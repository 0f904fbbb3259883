#include "model/nn/cpu_chain.h"

#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/linear.h"
#include "codelets/linear_backward.h"
#include "codelets/maxpool.h"
#include "codelets/relu.h"
#include "codelets/softmax_xent.h"

#include <algorithm>
#include <cstring>

namespace starcnn {

enum class ChainOpKind : uint32_t { conv, relu, maxpool, linear };

// One layer (flatten needs none: [N, C, H, W] and [N, C*H*W] are the same floats). Its output and
// the gradient of its output sit at out_offset in the task's activation and gradient buffers.
struct CpuChain::Op {
  ChainOpKind kind = ChainOpKind::relu;
  uint32_t param = 0;  // conv, linear: which layer with parameters (its 4 buffers)
  Conv2dShape conv;
  MaxpoolShape pool{};
  LinearShape linear{};
  uint64_t out_size = 0, out_offset = 0, argmax_offset = 0;
};

struct CpuChain::Program {
  uint32_t ops = 0, batch = 0, loss_batch = 0, classes = 0;
  uint64_t input_floats = 0, act_floats = 0, argmax_ints = 0, col_floats = 1;
  Op op[kMaxChainOps];
};

namespace {

// Buffers: images, labels, stats, then per layer with parameters w, dw, b, db.
constexpr unsigned kFirstParamBuffer = 3;
float *param_buffer(void *buffers[], uint32_t layer, unsigned which) {
  return vector_data(buffers[kFirstParamBuffer + 4 * layer + which]);
}

void chain_forward(const CpuChain::Program &p, void *buffers[], const float *images, float *act,
                   int32_t *argmax, float *col) {
  for (uint32_t i = 0; i < p.ops; ++i) {
    const CpuChain::Op &op = p.op[i];
    const float *in = i == 0 ? images : act + p.op[i - 1].out_offset;
    float *out = act + op.out_offset;
    switch (op.kind) {
      case ChainOpKind::conv:
        conv2d_forward_cpu(op.conv, in, param_buffer(buffers, op.param, 0),
                           param_buffer(buffers, op.param, 2), out, col);
        break;
      case ChainOpKind::relu:
        relu_forward_cpu(in, out, op.out_size);
        break;
      case ChainOpKind::maxpool:
        maxpool_forward_cpu(in, out, argmax + op.argmax_offset, op.pool);
        break;
      case ChainOpKind::linear:
        linear_forward_cpu(in, param_buffer(buffers, op.param, 0),
                           param_buffer(buffers, op.param, 2), out, op.linear, false);
        break;
    }
  }
}

// From the gradient of the last output (the loss's), back to the first layer's parameters; the
// first layer computes no input gradient.
void chain_backward(const CpuChain::Program &p, void *buffers[], const float *images,
                    const float *act, const int32_t *argmax, float *grad, float *col) {
  for (uint32_t i = p.ops; i-- > 0;) {
    const CpuChain::Op &op = p.op[i];
    const float *in = i == 0 ? images : act + p.op[i - 1].out_offset;
    const float *out = act + op.out_offset;
    const float *dout = grad + op.out_offset;
    float *din = i == 0 ? nullptr : grad + p.op[i - 1].out_offset;
    switch (op.kind) {
      case ChainOpKind::conv:
        conv2d_backward_filter_cpu(op.conv, in, dout, param_buffer(buffers, op.param, 1),
                                   param_buffer(buffers, op.param, 3), col, false);
        if (din)
          conv2d_backward_data_cpu(op.conv, param_buffer(buffers, op.param, 0), dout, din, col,
                                   false);
        break;
      case ChainOpKind::relu:
        if (din) relu_backward_cpu(out, dout, din, op.out_size);
        break;
      case ChainOpKind::maxpool:
        if (din) maxpool_backward_cpu(dout, argmax + op.argmax_offset, din, op.pool);
        break;
      case ChainOpKind::linear:
        linear_backward_cpu(in, param_buffer(buffers, op.param, 0), dout,
                            param_buffer(buffers, op.param, 1), param_buffer(buffers, op.param, 3),
                            nullptr, nullptr, din, op.linear);
        break;
    }
  }
}

void chain_cpu_task(void *buffers[], void *cl_arg) {
  CpuChain::Program p;
  starpu_codelet_unpack_args(cl_arg, &p);
  STARPU_ASSERT(vector_length(buffers[0]) == p.input_floats);
  STARPU_ASSERT(vector_length(buffers[1]) == p.batch);
  // Activations, their gradients and the im2col scratch, kept per worker from task to task.
  thread_local std::vector<float> act, grad, col;
  thread_local std::vector<int32_t> argmax;
  act.resize(p.act_floats);
  grad.resize(p.act_floats);
  col.resize(p.col_floats);
  argmax.resize(std::max<uint64_t>(1, p.argmax_ints));
  const float *images = vector_data(buffers[0]);
  chain_forward(p, buffers, images, act.data(), argmax.data(), col.data());
  const CpuChain::Op &last = p.op[p.ops - 1];
  softmax_xent_train_cpu(act.data() + last.out_offset, int32_vector_data(buffers[1]),
                         vector_data(buffers[2]), grad.data() + last.out_offset,
                         {p.batch, p.classes}, p.loss_batch);
  chain_backward(p, buffers, images, act.data(), argmax.data(), grad.data(), col.data());
}

starpu_perfmodel cpu_chain_model = history_model("starcnn_cpu_chain");
starpu_codelet cpu_chain_codelet =
    make_codelet("cpu_chain", chain_cpu_task, nullptr, &cpu_chain_model, {});

}  // namespace

std::optional<CpuChain> CpuChain::build(const NetworkSpec &spec, ParameterSet &params, int batch,
                                        int loss_batch, size_t grad_slot) {
  Program p;
  const uint32_t n = uint32_t(batch);
  p.batch = n;
  p.loss_batch = uint32_t(loss_batch);
  p.classes = uint32_t(spec.output().size());
  p.input_floats = uint64_t(n) * uint64_t(spec.input.size());
  CpuChain chain;
  const auto add_params = [&](const std::string &layer, Op &op) {
    op.param = uint32_t(chain.params_.size() / 4);
    Parameter &w = params.get(layer + ".weight"), &b = params.get(layer + ".bias");
    for (Parameter *t : {&w, &b}) {
      chain.params_.push_back(t->value(0).handle());
      chain.params_.push_back(t->grad(0, grad_slot).handle());
    }
  };
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind == LayerKind::flatten) continue;
    if (p.ops == uint32_t(kMaxChainOps)) return std::nullopt;
    Op &op = p.op[p.ops];
    switch (layer.kind) {
      case LayerKind::conv:
        if (params.conv_plan(layer.name).parts.size() != 1) return std::nullopt;
        op.kind = ChainOpKind::conv;
        op.conv = conv_shape(layer, n);
        p.col_floats = std::max<uint64_t>(p.col_floats, op.conv.col_rows() * op.conv.col_cols());
        add_params(layer.name, op);
        break;
      case LayerKind::relu:
        op.kind = ChainOpKind::relu;
        break;
      case LayerKind::maxpool:
        if (layer.kernel != 2) return std::nullopt;
        op.kind = ChainOpKind::maxpool;
        op.pool = {n, uint32_t(layer.in.c), uint32_t(layer.in.h), uint32_t(layer.in.w)};
        op.argmax_offset = p.argmax_ints;
        p.argmax_ints += op.pool.out_size();
        break;
      case LayerKind::linear:
        op.kind = ChainOpKind::linear;
        op.linear = {n, uint32_t(layer.in.size()), uint32_t(layer.out)};
        add_params(layer.name, op);
        break;
      case LayerKind::flatten:
        break;
    }
    op.out_size = uint64_t(n) * uint64_t(layer.out_shape.size());
    op.out_offset = p.act_floats;
    p.act_floats += op.out_size;
    ++p.ops;
  }
  if (p.ops == 0) return std::nullopt;
  chain.program_.resize(sizeof(Program));
  std::memcpy(chain.program_.data(), &p, sizeof(Program));
  return chain;
}

void CpuChain::submit(const Tensor &images, const Tensor &labels, const Tensor &stats,
                      Where where) const {
  std::vector<starpu_data_descr> buffers = {
      {images.handle(), STARPU_R}, {labels.handle(), STARPU_R}, {stats.handle(), STARPU_REDUX}};
  for (size_t i = 0; i < params_.size(); ++i)
    buffers.push_back({params_[i], i % 2 == 0 ? STARPU_R : STARPU_W});
  insert_task(cpu_chain_codelet, "cpu_chain", where, 0, STARPU_DATA_MODE_ARRAY, buffers.data(),
              int(buffers.size()), STARPU_VALUE, program_.data(), program_.size());
}

}  // namespace starcnn
