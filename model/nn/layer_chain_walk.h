// A LayerChain's passes over its layers, the same on both sides: `Kernels` (the CPU's or the
// CUDA worker's) runs each layer's op. Kernels provides
//   conv_forward(shape, x, w, b, y), relu_forward(x, y, n), maxpool_forward(x, p, argmax, shape),
//   conv_block_forward(shape, x, w, b, y, p or null, argmax or null) and
//   conv_block_backward(shape, x, w, dout, y, argmax or null, dz, dw, db, dx or null)
//   (conv_block.h), linear_forward(x, w, b, y, shape), loss(z, labels, stats, dz, shape,
//   batch_size), conv_backward(shape, x, w, dy, dw, db, dx or null), relu_backward(y, dy, dx, n),
//   maxpool_backward(dp, argmax, dx, shape), linear_backward(x, w, dy, dw, db, dx or null, shape).
#pragma once

#include "model/nn/layer_chain_program.h"

namespace starcnn {

// Forward through every layer into act (and the pools' argmax), the loss into stats and its
// gradient, then backward from it to the first layer's parameters; the first layer computes no
// input gradient. grad: act's size.
template <typename Kernels>
void walk_layer_chain(const LayerChain::Program &p, const LayerParams *params, const float *images,
                      const int32_t *labels, float *stats, float *act, float *grad, int32_t *argmax,
                      Kernels &k) {
  const auto input_of = [&](uint32_t i) { return i == 0 ? images : act + p.op[i - 1].out_offset; };
  for (uint32_t i = 0; i < p.ops; ++i) {
    const LayerChain::Op &op = p.op[i];
    float *out = act + op.out_offset;
    switch (op.kind) {
      case ChainOpKind::conv:
        if (op.fusion == uint32_t(ConvFusion::relu_pool))
          k.conv_block_forward(op.conv, input_of(i), params[op.param].w, params[op.param].b,
                               act + op.z_offset, out, argmax + op.argmax_offset);
        else if (op.fusion == uint32_t(ConvFusion::relu))
          k.conv_block_forward(op.conv, input_of(i), params[op.param].w, params[op.param].b, out,
                               nullptr, nullptr);
        else
          k.conv_forward(op.conv, input_of(i), params[op.param].w, params[op.param].b, out);
        break;
      case ChainOpKind::relu:
        k.relu_forward(input_of(i), out, op.out_size);
        break;
      case ChainOpKind::maxpool:
        k.maxpool_forward(input_of(i), out, argmax + op.argmax_offset, op.pool);
        break;
      case ChainOpKind::linear:
        k.linear_forward(input_of(i), params[op.param].w, params[op.param].b, out, op.linear);
        break;
    }
  }
  const LayerChain::Op &last = p.op[p.ops - 1];
  k.loss(act + last.out_offset, labels, stats, grad + last.out_offset, {p.batch, p.classes},
         p.loss_batch);
  for (uint32_t i = p.ops; i-- > 0;) {
    const LayerChain::Op &op = p.op[i];
    const float *dout = grad + op.out_offset;
    float *din = i == 0 ? nullptr : grad + p.op[i - 1].out_offset;
    const LayerParams &lp = params[op.param];
    switch (op.kind) {
      case ChainOpKind::conv:
        if (op.fusion == uint32_t(ConvFusion::relu_pool))
          k.conv_block_backward(op.conv, input_of(i), lp.w, dout, nullptr,
                                argmax + op.argmax_offset, grad + op.z_offset, lp.dw, lp.db, din);
        else if (op.fusion == uint32_t(ConvFusion::relu))
          k.conv_block_backward(op.conv, input_of(i), lp.w, dout, act + op.out_offset, nullptr,
                                grad + op.z_offset, lp.dw, lp.db, din);
        else
          k.conv_backward(op.conv, input_of(i), lp.w, dout, lp.dw, lp.db, din);
        break;
      case ChainOpKind::relu:
        if (din) k.relu_backward(act + op.out_offset, dout, din, op.out_size);
        break;
      case ChainOpKind::maxpool:
        if (din) k.maxpool_backward(dout, argmax + op.argmax_offset, din, op.pool);
        break;
      case ChainOpKind::linear:
        k.linear_backward(input_of(i), lp.w, dout, lp.dw, lp.db, din, op.linear);
        break;
    }
  }
}

}  // namespace starcnn
