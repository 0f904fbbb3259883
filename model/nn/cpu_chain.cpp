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
  uint32_t param = 0;                   // conv, linear: which layer with parameters (LayerParams)
  uint64_t w_offset = 0, b_offset = 0;  // in the packed weights, where the program has them
  Conv2dShape conv;
  MaxpoolShape pool{};
  LinearShape linear{};
  uint64_t out_size = 0, out_offset = 0, argmax_offset = 0;
};

struct CpuChain::Program {
  uint32_t ops = 0, batch = 0, loss_batch = 0, classes = 0;
  uint32_t packed_weights = 0;  // 1: w and b from one packed vector (ParameterSet::host_weights)
  uint64_t input_floats = 0, act_floats = 0, argmax_ints = 0, col_floats = 1;
  Op op[kMaxChainOps];
};

namespace {

// Buffers: images, labels, stats, then per layer with parameters w, dw, b, db; or, with packed
// weights, the packed vector and then per layer dw, db.
constexpr unsigned kFirstParamBuffer = 3;

struct LayerParams {
  const float *w, *b;
  float *dw, *db;
};

std::vector<LayerParams> layer_params(const CpuChain::Program &p, void *buffers[]) {
  std::vector<LayerParams> layers;
  void **b = buffers + kFirstParamBuffer;
  const float *packed = p.packed_weights ? vector_data(*b++) : nullptr;
  for (uint32_t i = 0; i < p.ops; ++i) {
    const CpuChain::Op &op = p.op[i];
    if (op.kind != ChainOpKind::conv && op.kind != ChainOpKind::linear) continue;
    if (packed) {
      layers.push_back(
          {packed + op.w_offset, packed + op.b_offset, vector_data(b[0]), vector_data(b[1])});
      b += 2;
    } else {
      layers.push_back(
          {vector_data(b[0]), vector_data(b[2]), vector_data(b[1]), vector_data(b[3])});
      b += 4;
    }
  }
  return layers;
}

void chain_forward(const CpuChain::Program &p, const LayerParams *params, const float *images,
                   float *act, int32_t *argmax, float *col) {
  for (uint32_t i = 0; i < p.ops; ++i) {
    const CpuChain::Op &op = p.op[i];
    const float *in = i == 0 ? images : act + p.op[i - 1].out_offset;
    float *out = act + op.out_offset;
    switch (op.kind) {
      case ChainOpKind::conv:
        conv2d_forward_cpu(op.conv, in, params[op.param].w, params[op.param].b, out, col);
        break;
      case ChainOpKind::relu:
        relu_forward_cpu(in, out, op.out_size);
        break;
      case ChainOpKind::maxpool:
        maxpool_forward_cpu(in, out, argmax + op.argmax_offset, op.pool);
        break;
      case ChainOpKind::linear:
        linear_forward_cpu(in, params[op.param].w, params[op.param].b, out, op.linear, false);
        break;
    }
  }
}

// From the gradient of the last output (the loss's), back to the first layer's parameters; the
// first layer computes no input gradient.
void chain_backward(const CpuChain::Program &p, const LayerParams *params, const float *images,
                    const float *act, const int32_t *argmax, float *grad, float *col) {
  for (uint32_t i = p.ops; i-- > 0;) {
    const CpuChain::Op &op = p.op[i];
    const float *in = i == 0 ? images : act + p.op[i - 1].out_offset;
    const float *out = act + op.out_offset;
    const float *dout = grad + op.out_offset;
    float *din = i == 0 ? nullptr : grad + p.op[i - 1].out_offset;
    switch (op.kind) {
      case ChainOpKind::conv:
        conv2d_backward_filter_cpu(op.conv, in, dout, params[op.param].dw, params[op.param].db, col,
                                   false);
        if (din) conv2d_backward_data_cpu(op.conv, params[op.param].w, dout, din, col, false);
        break;
      case ChainOpKind::relu:
        if (din) relu_backward_cpu(out, dout, din, op.out_size);
        break;
      case ChainOpKind::maxpool:
        if (din) maxpool_backward_cpu(dout, argmax + op.argmax_offset, din, op.pool);
        break;
      case ChainOpKind::linear:
        linear_backward_cpu(in, params[op.param].w, dout, params[op.param].dw, params[op.param].db,
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
  const std::vector<LayerParams> params = layer_params(p, buffers);
  chain_forward(p, params.data(), images, act.data(), argmax.data(), col.data());
  const CpuChain::Op &last = p.op[p.ops - 1];
  softmax_xent_train_cpu(act.data() + last.out_offset, int32_vector_data(buffers[1]),
                         vector_data(buffers[2]), grad.data() + last.out_offset,
                         {p.batch, p.classes}, p.loss_batch);
  chain_backward(p, params.data(), images, act.data(), argmax.data(), grad.data(), col.data());
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
  const Tensor *packed = params.host_weights();
  p.packed_weights = packed != nullptr;
  if (packed) chain.params_.push_back({packed->handle(), STARPU_R});
  uint32_t layers_with_params = 0;
  const auto add_params = [&](const std::string &layer, Op &op) {
    op.param = layers_with_params++;
    Parameter &w = params.get(layer + ".weight"), &b = params.get(layer + ".bias");
    if (packed) {
      op.w_offset = params.host_offset(w);
      op.b_offset = params.host_offset(b);
      for (Parameter *t : {&w, &b})
        chain.params_.push_back({t->grad(0, grad_slot).handle(), STARPU_W});
      return;
    }
    for (Parameter *t : {&w, &b}) {
      chain.params_.push_back({t->value(0).handle(), STARPU_R});
      chain.params_.push_back({t->grad(0, grad_slot).handle(), STARPU_W});
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
  buffers.insert(buffers.end(), params_.begin(), params_.end());
  insert_task(cpu_chain_codelet, "cpu_chain", where, 0, STARPU_DATA_MODE_ARRAY, buffers.data(),
              int(buffers.size()), STARPU_VALUE, program_.data(), program_.size());
}

}  // namespace starcnn
