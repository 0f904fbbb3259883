// Float64 naive convolution written straight from the definition, for tests only:
// y[i,f,oy,ox] = b[f] + sum_{c,ky,kx} w[f,c,ky,kx] * x[i,c,oy*stride-pad+ky,ox*stride-pad+kx].
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "codelets/conv2d/conv2d_shape.h"
#include "tests/support/comparisons.h"

namespace starcnn::testing {

// Calls visit(x index, w index, y index) for every product term of the convolution.
template <typename Visit>
void for_each_term(const Conv2dShape &s, Visit visit) {
  const long oh = s.out_h(), ow = s.out_w(), h = s.h, w = s.w, k = s.k;
  for (long i = 0; i < long(s.n); ++i)
    for (long f = 0; f < long(s.c_out); ++f)
      for (long oy = 0; oy < oh; ++oy)
        for (long ox = 0; ox < ow; ++ox)
          for (long c = 0; c < long(s.c_in); ++c)
            for (long ky = 0; ky < k; ++ky)
              for (long kx = 0; kx < k; ++kx) {
                const long iy = oy * long(s.stride) - long(s.pad) + ky;
                const long ix = ox * long(s.stride) - long(s.pad) + kx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                visit(size_t(((i * long(s.c_in) + c) * h + iy) * w + ix),
                      size_t(((f * long(s.c_in) + c) * k + ky) * k + kx),
                      size_t(((i * long(s.c_out) + f) * oh + oy) * ow + ox));
              }
}

template <typename T>
std::vector<double> reference_forward(const Conv2dShape &s, const std::vector<T> &x,
                                      const std::vector<T> &w, const std::vector<T> &b) {
  std::vector<double> y(s.y_count());
  const size_t plane = size_t(s.out_h()) * s.out_w();
  for (size_t j = 0; j < y.size(); ++j) y[j] = double(b[(j / plane) % s.c_out]);
  for_each_term(s, [&](size_t xi, size_t wi, size_t yi) { y[yi] += double(w[wi]) * x[xi]; });
  return y;
}

inline std::vector<double> reference_backward_filter(const Conv2dShape &s,
                                                     const std::vector<float> &x,
                                                     const std::vector<float> &dy) {
  std::vector<double> dw(s.w_count());
  for_each_term(s, [&](size_t xi, size_t wi, size_t yi) { dw[wi] += double(dy[yi]) * x[xi]; });
  return dw;
}

inline std::vector<double> reference_backward_bias(const Conv2dShape &s,
                                                   const std::vector<float> &dy) {
  std::vector<double> db(s.c_out);
  const size_t plane = size_t(s.out_h()) * s.out_w();
  for (size_t j = 0; j < dy.size(); ++j) db[(j / plane) % s.c_out] += dy[j];
  return db;
}

inline std::vector<double> reference_backward_data(const Conv2dShape &s,
                                                   const std::vector<float> &w,
                                                   const std::vector<float> &dy) {
  std::vector<double> dx(s.x_count());
  for_each_term(s, [&](size_t xi, size_t wi, size_t yi) { dx[xi] += double(w[wi]) * dy[yi]; });
  return dx;
}

// Central differences of loss = sum(forward(x, w, b) * r) with respect to up to `samples` evenly
// spread elements of `which` (0: x, 1: w, 2: b). The loss is linear in each input, so the step
// size only matters for rounding. Returns (element index, derivative) pairs.
inline std::vector<std::pair<size_t, double>> finite_differences(
    const Conv2dShape &s, const std::vector<float> &x, const std::vector<float> &w,
    const std::vector<float> &b, const std::vector<float> &r, int which, size_t samples = 12) {
  std::vector<std::vector<double>> in = {
      {x.begin(), x.end()}, {w.begin(), w.end()}, {b.begin(), b.end()}};
  auto loss = [&]() {
    const std::vector<double> y = reference_forward(s, in[0], in[1], in[2]);
    double sum = 0.0;
    for (size_t j = 0; j < y.size(); ++j) sum += y[j] * r[j];
    return sum;
  };
  std::vector<std::pair<size_t, double>> out;
  std::vector<double> &v = in[size_t(which)];
  const size_t step = std::max<size_t>(1, v.size() / samples);
  const double h = 0.5;
  for (size_t j = 0; j < v.size(); j += step) {
    const double saved = v[j];
    v[j] = saved + h;
    const double up = loss();
    v[j] = saved - h;
    const double down = loss();
    v[j] = saved;
    out.emplace_back(j, (up - down) / (2 * h));
  }
  return out;
}

// |got - fd| <= 1e-4 * (1 + |fd|) at each finite-difference point: float32 sums of up to a few
// thousand terms of size ~1.
inline void expect_matches_differences(const std::vector<float> &got,
                                       const std::vector<std::pair<size_t, double>> &fd) {
  ASSERT_FALSE(fd.empty());
  for (const auto &[index, want] : fd)
    ASSERT_LE(std::fabs(double(got[index]) - want), 1e-4 * (1.0 + std::fabs(want)))
        << "finite difference at element " << index << ": got " << got[index] << ", want " << want;
}

}  // namespace starcnn::testing
