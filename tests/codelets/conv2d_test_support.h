// Random convolution problems and sub-batch lengths for the conv2d tests.
#pragma once

#include <starpu.h>

#include <string>
#include <vector>

#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_shape.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/vector_partition.h"

namespace starcnn::testing {

// Inputs of one convolution and a random upstream gradient r (dY), all in [-1, 1].
struct ConvProblem {
  Conv2dShape shape;
  std::vector<float> x, w, b, r;
};

// The results of a layer's forward (y) and backward (dw, db, dx) passes.
struct ConvResults {
  std::vector<float> y, dw, db, dx;
};

// The whole layer as one task of each op (forward, backward filter, backward data) on `where`,
// outputs starting as garbage (-7) so that an unwritten element shows.
inline ConvResults run_whole_layer(const ConvProblem &p, Where where = Where::any) {
  const Conv2dShape &s = p.shape;
  RegisteredVector xh(p.x), wh(p.w), bh(p.b), dyh(p.r), yh(s.y_count(), -7.0f),
      dwh(s.w_count(), -7.0f), dbh(s.b_count(), -7.0f), dxh(s.x_count(), -7.0f);
  submit_conv2d_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(), s, where);
  submit_conv2d_backward_filter(xh.handle(), dyh.handle(), dwh.handle(), dbh.handle(), s,
                                GradientAccess::overwrite, where);
  submit_conv2d_backward_data(wh.handle(), dyh.handle(), dxh.handle(), s, GradientAccess::overwrite,
                              where);
  return {yh.read(), dwh.read(), dbh.read(), dxh.read()};
}

inline ConvProblem random_problem(const Conv2dShape &s, uint32_t seed) {
  return {s, random_floats(s.x_count(), seed), random_floats(s.w_count(), seed + 1),
          random_floats(s.b_count(), seed + 2), random_floats(s.y_count(), seed + 3)};
}

inline std::string describe(const Conv2dShape &s) {
  return "n=" + std::to_string(s.n) + " c_in=" + std::to_string(s.c_in) +
         " h=" + std::to_string(s.h) + " w=" + std::to_string(s.w) +
         " c_out=" + std::to_string(s.c_out) + " k=" + std::to_string(s.k) +
         " stride=" + std::to_string(s.stride) + " pad=" + std::to_string(s.pad);
}

// Shapes covering odd sizes, batch 1, one filter, non-square inputs, 1x1, 5x5 pad 0, 3x3 pad 1,
// stride 2 with and without padding, an even kernel, and a longer reduction (c_in 16).
inline const std::vector<Conv2dShape> &test_shapes() {
  static const std::vector<Conv2dShape> shapes = {
      {2, 3, 7, 9, 4, 3, 1, 1},   {1, 1, 5, 5, 1, 5, 1, 0},  {3, 2, 11, 8, 5, 3, 2, 1},
      {2, 3, 12, 12, 6, 5, 1, 0}, {1, 4, 6, 5, 3, 1, 1, 0},  {2, 2, 9, 10, 3, 4, 2, 0},
      {3, 16, 8, 8, 7, 3, 1, 1},  {1, 3, 13, 6, 1, 3, 2, 1}, {2, 2, 4, 3, 3, 3, 2, 2},
  };
  return shapes;
}

// Element counts of the weight (w) and bias (b) slices of a layer cut into slices of `filters`
// filters each.
struct SliceLengths {
  std::vector<uint32_t> w, b;
};

inline SliceLengths filter_slice_lengths(const Conv2dShape &s,
                                         const std::vector<uint32_t> &filters) {
  SliceLengths lengths;
  for (uint32_t f : filters) {
    lengths.w.push_back(f * s.c_in * s.k * s.k);
    lengths.b.push_back(f);
  }
  return lengths;
}

// Element counts of the sub-batches of `samples` samples each, cut from a tensor of `count`
// elements holding `batch` samples.
inline std::vector<uint32_t> sub_batch_lengths(size_t count, uint32_t batch,
                                               const std::vector<uint32_t> &samples) {
  std::vector<uint32_t> lengths;
  for (uint32_t n : samples) lengths.push_back(uint32_t(n * count / batch));
  return lengths;
}

}  // namespace starcnn::testing
