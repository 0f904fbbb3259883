// The Winograd F(2x2, 3x3) CPU convolutions (codelets/conv2d/winograd_conv.h) called on their own
// against the float64 reference: outputs of even and odd sizes (tiles sticking out), padding 0, 1
// and 2, several samples, channel counts off any power of two, and the data gradient overwriting
// and adding into what dX held; the weight gradient likewise; and more tiles than one block holds.
#include "codelets/conv2d/winograd_conv.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/codelets/conv2d_reference.h"
#include "tests/codelets/conv2d_test_support.h"

namespace starcnn {
namespace {

std::vector<Conv2dShape> winograd_shapes() {
  return {
      {3, 16, 8, 8, 16, 3, 1, 1}, {2, 17, 7, 9, 20, 3, 1, 1},
      {2, 16, 9, 7, 18, 3, 1, 0}, {1, 19, 5, 6, 16, 3, 1, 2},
      {4, 32, 4, 4, 40, 3, 1, 1}, {2, 16, 66, 66, 16, 3, 1, 1}};  // 2178 tiles: more than one block
}

// Calls check(shape, problem) for every shape, each with its own random problem from `seed` on.
template <typename Check>
void for_each_problem(uint32_t seed, Check check) {
  for (const Conv2dShape &s : winograd_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    check(s, testing::random_problem(s, seed += 10));
  }
}

// want + added, element by element.
std::vector<double> plus(std::vector<double> want, const std::vector<float> &added) {
  for (size_t i = 0; i < want.size(); ++i) want[i] += added[i];
  return want;
}

TEST(WinogradConv, ServesThreeByThreeStrideOneWithEnoughChannels) {
  EXPECT_TRUE(winograd_forward_serves({4, 128, 8, 8, 256, 3, 1, 1}));  // wide's conv5
  EXPECT_TRUE(winograd_data_grad_serves({4, 64, 32, 32, 64, 3, 1, 1}));
  EXPECT_TRUE(winograd_filter_grad_serves({4, 256, 8, 8, 256, 3, 1, 1}));
  EXPECT_FALSE(winograd_forward_serves({4, 3, 32, 32, 64, 3, 1, 1}));    // wide's conv1
  EXPECT_FALSE(winograd_forward_serves({4, 6, 14, 14, 16, 5, 1, 0}));    // lenet's conv2
  EXPECT_FALSE(winograd_forward_serves({4, 64, 16, 16, 64, 3, 2, 1}));   // strided
  EXPECT_FALSE(winograd_data_grad_serves({4, 64, 16, 16, 8, 3, 1, 1}));  // few filters
}

TEST(WinogradConv, ForwardMatchesTheReference) {
  for_each_problem(300, [](const Conv2dShape &s, const testing::ConvProblem &p) {
    ASSERT_TRUE(winograd_forward_serves(s));
    std::vector<float> y(s.y_count(), -7.0f);
    winograd_forward(s, p.x.data(), p.w.data(), p.b.data(), y.data());
    testing::expect_close(y, testing::reference_forward(s, p.x, p.w, p.b));
  });
}

TEST(WinogradConv, DataGradientMatchesTheReferenceOverwritingAndAdding) {
  for_each_problem(400, [](const Conv2dShape &s, const testing::ConvProblem &p) {
    ASSERT_TRUE(winograd_data_grad_serves(s));
    const std::vector<double> want = testing::reference_backward_data(s, p.w, p.r);
    std::vector<float> dx(s.x_count(), -7.0f);
    winograd_backward_data(s, p.w.data(), p.r.data(), dx.data(), false);
    testing::expect_close(dx, want);
    const std::vector<float> dx0 = testing::random_floats(s.x_count(), 401);
    std::vector<float> sum = dx0;
    winograd_backward_data(s, p.w.data(), p.r.data(), sum.data(), true);
    testing::expect_close(sum, plus(want, dx0));
  });
}

TEST(WinogradConv, WeightGradientMatchesTheReferenceOverwritingAndAdding) {
  for_each_problem(500, [](const Conv2dShape &s, const testing::ConvProblem &p) {
    ASSERT_TRUE(winograd_filter_grad_serves(s));
    const std::vector<double> want_dw = testing::reference_backward_filter(s, p.x, p.r),
                              want_db = testing::reference_backward_bias(s, p.r);
    std::vector<float> dw(s.w_count(), -7.0f), db(s.b_count(), -7.0f);
    winograd_backward_filter(s, p.x.data(), p.r.data(), dw.data(), db.data(), false);
    testing::expect_close(dw, want_dw);
    testing::expect_close(db, want_db);
    const std::vector<float> dw0 = testing::random_floats(s.w_count(), 501),
                             db0 = testing::random_floats(s.b_count(), 502);
    std::vector<float> dw_sum = dw0, db_sum = db0;
    winograd_backward_filter(s, p.x.data(), p.r.data(), dw_sum.data(), db_sum.data(), true);
    testing::expect_close(dw_sum, plus(want_dw, dw0));
    testing::expect_close(db_sum, plus(want_db, db0));
  });
}

}  // namespace
}  // namespace starcnn
