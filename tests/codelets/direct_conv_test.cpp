// The direct CPU convolutions (codelets/conv2d/direct_conv.h) called on their own, whichever op
// the dispatch would give them, against the float64 reference: odd widths (a last partial block
// of 16 positions), padding, filter and channel counts off the register blocks, several samples,
// and the lenet shapes they are used for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codelets/conv2d/direct_conv.h"
#include "tests/codelets/conv2d_reference.h"
#include "tests/codelets/conv2d_test_support.h"

namespace starcnn {
namespace {

std::vector<Conv2dShape> direct_shapes() {
  std::vector<Conv2dShape> shapes;
  for (const Conv2dShape &s : testing::test_shapes())
    if (s.stride == 1 && !s.pointwise()) shapes.push_back(s);
  // lenet's conv1 and conv2 (3-channel input), MNIST's conv1, an even kernel with padding 2,
  // one output column, 16 input channels and 32 filters (the limits).
  shapes.push_back({3, 3, 32, 32, 6, 5, 1, 0});
  shapes.push_back({2, 6, 14, 14, 16, 5, 1, 0});
  shapes.push_back({2, 1, 28, 28, 6, 5, 1, 0});
  shapes.push_back({2, 3, 9, 11, 5, 4, 1, 2});
  shapes.push_back({1, 2, 6, 3, 3, 3, 1, 0});
  shapes.push_back({1, 16, 7, 6, 32, 3, 1, 1});
  return shapes;
}

// Scratch for every kernel of `s`, filled with garbage.
std::vector<float> scratch_for(const Conv2dShape &s) {
  return std::vector<float>(direct_conv_scratch_floats(s), -3.0f);
}

// check(shape, problem) for a random problem of each shape.
template <typename Check>
void for_each_problem(uint32_t seed, Check check) {
  for (const Conv2dShape &s : direct_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    check(s, testing::random_problem(s, seed += 10));
  }
}

TEST(DirectConv, ForwardMatchesReference) {
  for_each_problem(100, [](const Conv2dShape &s, const testing::ConvProblem &p) {
    std::vector<float> scratch = scratch_for(s), y(s.y_count(), -7.0f);
    direct_conv_forward(s, p.x.data(), p.w.data(), p.b.data(), y.data(), scratch.data());
    testing::expect_close(y, testing::reference_forward(s, p.x, p.w, p.b));
  });
}

TEST(DirectConv, FilterGradientMatchesReferenceAndAccumulates) {
  for_each_problem(200, [](const Conv2dShape &s, const testing::ConvProblem &p) {
    const std::vector<double> want_dw = testing::reference_backward_filter(s, p.x, p.r);
    const std::vector<double> want_db = testing::reference_backward_bias(s, p.r);
    std::vector<double> twice_dw(want_dw), twice_db(want_db);
    for (double &v : twice_dw) v *= 2;
    for (double &v : twice_db) v *= 2;
    // The least scratch, and room for every sample at once (their sums cross lanes once).
    for (size_t room : {size_t(1), size_t(s.n)}) {
      SCOPED_TRACE("scratch x" + std::to_string(room));
      std::vector<float> scratch(direct_conv_scratch_floats(s) * room, -3.0f);
      std::vector<float> dw(s.w_count(), -7.0f), db(s.b_count(), -7.0f);
      direct_conv_backward_filter(s, p.x.data(), p.r.data(), dw.data(), db.data(), scratch.data(),
                                  scratch.size(), false);
      testing::expect_close(dw, want_dw);
      testing::expect_close(db, want_db);
      // Accumulating adds the same gradient again.
      direct_conv_backward_filter(s, p.x.data(), p.r.data(), dw.data(), db.data(), scratch.data(),
                                  scratch.size(), true);
      testing::expect_close(dw, twice_dw);
      testing::expect_close(db, twice_db);
    }
  });
}

TEST(DirectConv, DataGradientMatchesReferenceAndAccumulates) {
  for_each_problem(300, [](const Conv2dShape &s, const testing::ConvProblem &p) {
    std::vector<float> scratch = scratch_for(s), dx(s.x_count(), -7.0f);
    direct_conv_backward_data(s, p.w.data(), p.r.data(), dx.data(), scratch.data(), false);
    const std::vector<double> want = testing::reference_backward_data(s, p.w, p.r);
    testing::expect_close(dx, want);
    const std::vector<float> start = testing::random_floats(s.x_count(), 7);
    std::vector<float> sum(start);
    direct_conv_backward_data(s, p.w.data(), p.r.data(), sum.data(), scratch.data(), true);
    std::vector<double> want_sum(want);
    for (size_t j = 0; j < want_sum.size(); ++j) want_sum[j] += start[j];
    testing::expect_close(sum, want_sum);
  });
}

// The dispatch: lenet's conv1 takes every direct kernel, conv2 all but dX's, and strided,
// wide or pointwise layers none; nor does a scratch buffer too small.
TEST(DirectConv, ServesTheShapesItWins) {
  const Conv2dShape conv1{8, 3, 32, 32, 6, 5, 1, 0}, conv2{8, 6, 14, 14, 16, 5, 1, 0};
  const auto col = [](const Conv2dShape &s) { return s.col_rows() * s.col_cols(); };
  EXPECT_TRUE(direct_forward_serves(conv1, col(conv1)));
  EXPECT_TRUE(direct_filter_grad_serves(conv1, col(conv1)));
  EXPECT_TRUE(direct_data_grad_serves(conv1, col(conv1)));
  EXPECT_TRUE(direct_forward_serves(conv2, col(conv2)));
  EXPECT_TRUE(direct_filter_grad_serves(conv2, col(conv2)));
  EXPECT_FALSE(direct_data_grad_serves(conv2, col(conv2)));
  const Conv2dShape strided{8, 3, 32, 32, 6, 5, 2, 0}, wide{8, 64, 32, 32, 64, 3, 1, 1},
      pointwise{8, 3, 32, 32, 6, 1, 1, 0};
  for (const Conv2dShape &s : {strided, wide, pointwise}) {
    EXPECT_FALSE(direct_forward_serves(s, col(s)));
    EXPECT_FALSE(direct_filter_grad_serves(s, col(s)));
    EXPECT_FALSE(direct_data_grad_serves(s, col(s)));
  }
  EXPECT_FALSE(direct_forward_serves(conv1, 100));
}

}  // namespace
}  // namespace starcnn
