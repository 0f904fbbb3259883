// One SGD training step of LeNet-5 (1x32x32 inputs) in float64, written from the definitions with
// naive loops, for tests only. It shares no code with starcnn's kernels:
//   conv1 5x5 (1->6) + bias, relu, maxpool 2x2, conv2 5x5 (6->16) + bias, relu, maxpool 2x2,
//   flatten (400), fc1 (120) relu, fc2 (84) relu, fc3 (10),
//   loss = mean over the batch of -log softmax(z)[label] (PyTorch's CrossEntropyLoss),
//   torch.optim.SGD: g = dL/dw + wd * w; buf = g on the first step, else momentum * buf + g;
//   w -= lr * buf.
// Maxpool gives its gradient to the first maximum of each window in scan order, as PyTorch does.
// Tensors are flat row-major vectors in PyTorch's layouts (NCHW, weight [out, in, k, k] or
// [out, in]); parameters come in state_dict order: conv1.weight, conv1.bias, ..., fc3.bias.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace starcnn::testing::lenet {

using Values = std::vector<double>;

// An activation of n samples of c planes of h x w (a flat vector is c x 1 x 1).
struct Activation {
  size_t n = 0, c = 0, h = 1, w = 1;
  Values v;
  double &at(size_t i, size_t ch, size_t y, size_t x) { return v[((i * c + ch) * h + y) * w + x]; }
  double at(size_t i, size_t ch, size_t y, size_t x) const {
    return v[((i * c + ch) * h + y) * w + x];
  }
};

inline Activation zeros_like(const Activation &a) {
  return {a.n, a.c, a.h, a.w, Values(a.v.size(), 0.0)};
}

// y[i,f,oy,ox] = b[f] + sum_{c,ky,kx} w[f,c,ky,kx] * x[i,c,oy+ky,ox+kx]  (stride 1, no padding)
inline Activation conv2d(const Activation &x, const Values &w, const Values &b, size_t f,
                         size_t k) {
  Activation y{x.n, f, x.h - k + 1, x.w - k + 1, {}};
  y.v.assign(y.n * y.c * y.h * y.w, 0.0);
  for (size_t i = 0; i < x.n; ++i)
    for (size_t o = 0; o < f; ++o)
      for (size_t oy = 0; oy < y.h; ++oy)
        for (size_t ox = 0; ox < y.w; ++ox) {
          double sum = b[o];
          for (size_t c = 0; c < x.c; ++c)
            for (size_t ky = 0; ky < k; ++ky)
              for (size_t kx = 0; kx < k; ++kx)
                sum += w[((o * x.c + c) * k + ky) * k + kx] * x.at(i, c, oy + ky, ox + kx);
          y.at(i, o, oy, ox) = sum;
        }
  return y;
}

// Given dL/dy: dL/dw, dL/db and (into dx, same shape as x) dL/dx.
inline void conv2d_backward(const Activation &x, const Values &w, const Activation &dy, size_t k,
                            Values &dw, Values &db, Activation &dx) {
  dw.assign(dy.c * x.c * k * k, 0.0);
  db.assign(dy.c, 0.0);
  dx = zeros_like(x);
  for (size_t i = 0; i < x.n; ++i)
    for (size_t o = 0; o < dy.c; ++o)
      for (size_t oy = 0; oy < dy.h; ++oy)
        for (size_t ox = 0; ox < dy.w; ++ox) {
          const double g = dy.at(i, o, oy, ox);
          db[o] += g;
          for (size_t c = 0; c < x.c; ++c)
            for (size_t ky = 0; ky < k; ++ky)
              for (size_t kx = 0; kx < k; ++kx) {
                const size_t wi = ((o * x.c + c) * k + ky) * k + kx;
                dw[wi] += g * x.at(i, c, oy + ky, ox + kx);
                dx.at(i, c, oy + ky, ox + kx) += g * w[wi];
              }
        }
}

inline Activation relu(const Activation &z) {
  Activation y = z;
  for (double &v : y.v) v = std::max(v, 0.0);
  return y;
}

// dL/dz = dL/dy where z > 0, else 0.
inline Activation relu_backward(const Activation &z, const Activation &dy) {
  Activation dz = dy;
  for (size_t j = 0; j < dz.v.size(); ++j)
    if (!(z.v[j] > 0.0)) dz.v[j] = 0.0;
  return dz;
}

// 2x2 windows, stride 2; `first_max` gets the flat index into x of each window's first maximum.
inline Activation maxpool2(const Activation &x, std::vector<size_t> &first_max) {
  Activation p{x.n, x.c, x.h / 2, x.w / 2, {}};
  p.v.assign(p.n * p.c * p.h * p.w, 0.0);
  first_max.assign(p.v.size(), 0);
  for (size_t i = 0; i < x.n; ++i)
    for (size_t c = 0; c < x.c; ++c)
      for (size_t py = 0; py < p.h; ++py)
        for (size_t px = 0; px < p.w; ++px) {
          size_t best = ((i * x.c + c) * x.h + 2 * py) * x.w + 2 * px;
          for (size_t dy = 0; dy < 2; ++dy)
            for (size_t dx = 0; dx < 2; ++dx) {
              const size_t j = ((i * x.c + c) * x.h + 2 * py + dy) * x.w + 2 * px + dx;
              if (x.v[j] > x.v[best]) best = j;
            }
          const size_t out = ((i * x.c + c) * p.h + py) * p.w + px;
          p.v[out] = x.v[best];
          first_max[out] = best;
        }
  return p;
}

inline Activation maxpool2_backward(const Activation &x, const std::vector<size_t> &first_max,
                                    const Activation &dp) {
  Activation dx = zeros_like(x);
  for (size_t out = 0; out < dp.v.size(); ++out) dx.v[first_max[out]] += dp.v[out];
  return dx;
}

// y[i,o] = b[o] + sum_j w[o,j] * x[i,j], x seen as [n, c*h*w] (the flatten).
inline Activation linear(const Activation &x, const Values &w, const Values &b, size_t out) {
  const size_t in = x.c * x.h * x.w;
  Activation y{x.n, out, 1, 1, Values(x.n * out, 0.0)};
  for (size_t i = 0; i < x.n; ++i)
    for (size_t o = 0; o < out; ++o) {
      double sum = b[o];
      for (size_t j = 0; j < in; ++j) sum += w[o * in + j] * x.v[i * in + j];
      y.v[i * out + o] = sum;
    }
  return y;
}

inline void linear_backward(const Activation &x, const Values &w, const Activation &dy, Values &dw,
                            Values &db, Activation &dx) {
  const size_t in = x.c * x.h * x.w, out = dy.c;
  dw.assign(out * in, 0.0);
  db.assign(out, 0.0);
  dx = zeros_like(x);
  for (size_t i = 0; i < x.n; ++i)
    for (size_t o = 0; o < out; ++o) {
      const double g = dy.v[i * out + o];
      db[o] += g;
      for (size_t j = 0; j < in; ++j) {
        dw[o * in + j] += g * x.v[i * in + j];
        dx.v[i * in + j] += g * w[o * in + j];
      }
    }
}

// Summed loss -log softmax(z_i)[label_i] over the batch, the count of rows whose first maximum is
// the label, and dL/dz of the MEAN loss: (softmax(z_i) - onehot(label_i)) / n.
struct LossResult {
  double loss_sum = 0.0;
  int correct = 0;
  Activation dz;
};

inline LossResult softmax_cross_entropy(const Activation &z, const std::vector<int32_t> &labels) {
  LossResult r;
  r.dz = zeros_like(z);
  const size_t classes = z.c;
  for (size_t i = 0; i < z.n; ++i) {
    const double *row = &z.v[i * classes];
    const size_t best = size_t(std::max_element(row, row + classes) - row);
    const double top = row[best];
    double sum = 0.0;
    for (size_t j = 0; j < classes; ++j) sum += std::exp(row[j] - top);
    const size_t label = size_t(labels[i]);
    r.loss_sum += std::log(sum) - (row[label] - top);
    r.correct += best == label ? 1 : 0;
    for (size_t j = 0; j < classes; ++j)
      r.dz.v[i * classes + j] =
          (std::exp(row[j] - top) / sum - (j == label ? 1.0 : 0.0)) / double(z.n);
  }
  return r;
}

// Parameters, gradients or momentum buffers in state_dict order.
using Params = std::vector<Values>;
enum Index { conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b, fc3_w, fc3_b };

// The forward pass and the loss; returns the gradients of the mean loss in state_dict order.
inline Params gradients(const Params &p, const Activation &images,
                        const std::vector<int32_t> &labels, double &loss_sum, int &correct) {
  std::vector<size_t> max1, max2;
  const Activation z1 = conv2d(images, p[conv1_w], p[conv1_b], 6, 5);  // 6x28x28
  const Activation a1 = relu(z1);
  const Activation p1 = maxpool2(a1, max1);                         // 6x14x14
  const Activation z2 = conv2d(p1, p[conv2_w], p[conv2_b], 16, 5);  // 16x10x10
  const Activation a2 = relu(z2);
  const Activation p2 = maxpool2(a2, max2);                   // 16x5x5, flattened to 400
  const Activation z3 = linear(p2, p[fc1_w], p[fc1_b], 120);  // 120
  const Activation a3 = relu(z3);
  const Activation z4 = linear(a3, p[fc2_w], p[fc2_b], 84);  // 84
  const Activation a4 = relu(z4);
  const Activation z5 = linear(a4, p[fc3_w], p[fc3_b], 10);  // 10 class scores
  LossResult loss = softmax_cross_entropy(z5, labels);
  loss_sum = loss.loss_sum;
  correct = loss.correct;

  Params g(p.size());
  Activation da4, da3, dp2, dp1, dimages;
  linear_backward(a4, p[fc3_w], loss.dz, g[fc3_w], g[fc3_b], da4);
  linear_backward(a3, p[fc2_w], relu_backward(z4, da4), g[fc2_w], g[fc2_b], da3);
  linear_backward(p2, p[fc1_w], relu_backward(z3, da3), g[fc1_w], g[fc1_b], dp2);
  const Activation dz2 = relu_backward(z2, maxpool2_backward(a2, max2, dp2));
  conv2d_backward(p1, p[conv2_w], dz2, 5, g[conv2_w], g[conv2_b], dp1);
  const Activation dz1 = relu_backward(z1, maxpool2_backward(a1, max1, dp1));
  conv2d_backward(images, p[conv1_w], dz1, 5, g[conv1_w], g[conv1_b], dimages);
  return g;
}

struct Sgd {
  double lr, momentum, weight_decay;
  bool first_step;
};

// torch.optim.SGD (dampening 0, no Nesterov) on every parameter; `buffers` are the momentum
// buffers (sized on the first step).
inline void sgd_step(Params &p, const Params &g, Params &buffers, const Sgd &sgd) {
  buffers.resize(p.size());
  for (size_t t = 0; t < p.size(); ++t) {
    buffers[t].resize(p[t].size());
    for (size_t j = 0; j < p[t].size(); ++j) {
      const double d = g[t][j] + sgd.weight_decay * p[t][j];
      buffers[t][j] = sgd.first_step ? d : sgd.momentum * buffers[t][j] + d;
      p[t][j] -= sgd.lr * buffers[t][j];
    }
  }
}

}  // namespace starcnn::testing::lenet
