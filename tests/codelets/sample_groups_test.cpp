// The CPU im2col convolutions that lower several samples side by side into one GEMM
// (codelets/conv2d/sample_groups.h), called on their own against the float64 reference: groups
// that divide the batch and groups with a shorter last one, padding, stride, and both gradient
// modes (overwrite and accumulate into what the output held).
#include "codelets/conv2d/sample_groups.h"

#include <gtest/gtest.h>

#include <vector>

#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/direct_conv.h"
#include "tests/codelets/conv2d_reference.h"
#include "tests/codelets/conv2d_test_support.h"

namespace starcnn {
namespace {

// Shapes the direct kernels do not take (over 32 filters or 16 input channels, or strided) with
// outputs small enough that several samples share a GEMM: wide's 8x8 layers at a chain's 4
// samples, 30 columns a sample in groups of 9 (11 = 9 + 2), a strided 5x5 output in groups of 11
// (12 = 11 + 1), and one sample alone.
std::vector<Conv2dShape> grouped_shapes() {
  return {{4, 20, 8, 8, 40, 3, 1, 1},
          {11, 3, 6, 5, 33, 3, 1, 1},
          {12, 20, 9, 9, 36, 3, 2, 1},
          {1, 20, 8, 8, 40, 3, 1, 1}};
}

TEST(SampleGroups, GroupsReachTheGemmWidthWithinTheBatch) {
  EXPECT_EQ(samples_per_gemm({4, 128, 8, 8, 256, 3, 1, 1}), 4u);  // 64 columns a sample
  EXPECT_EQ(samples_per_gemm({64, 128, 8, 8, 256, 3, 1, 1}), 4u);
  EXPECT_EQ(samples_per_gemm({11, 3, 6, 5, 33, 3, 1, 1}), 9u);     // 30 columns: 9 make 270
  EXPECT_EQ(samples_per_gemm({8, 64, 16, 16, 128, 3, 1, 1}), 1u);  // 256 columns already
  EXPECT_EQ(samples_per_gemm({8, 64, 4, 4, 64, 1, 1, 0}), 1u);     // pointwise: X is its own col
}

TEST(SampleGroups, ALargerShapesScratchServesASmallerOne) {
  const Conv2dShape whole{16, 128, 8, 8, 256, 3, 1, 1};
  for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 15u, 16u})
    for (uint32_t c_out : {1u, 100u, 256u}) {
      Conv2dShape part = whole;
      part.n = n;
      part.c_out = c_out;
      EXPECT_LE(cpu_col_floats(part), cpu_col_floats(whole)) << testing::describe(part);
    }
}

TEST(SampleGroups, GatherAndScatterMoveEveryElementOnce) {
  const size_t g = 3, channels = 2, cols = 5;
  const std::vector<float> tensor = testing::random_floats(g * channels * cols, 7);
  const std::vector<float> bias = {0.5f, -2.0f};
  std::vector<float> block(tensor.size(), -7.0f), back(tensor.size(), -7.0f);
  gather_samples(tensor.data(), g, channels, cols, block.data());
  for (size_t j = 0; j < g; ++j)
    for (size_t c = 0; c < channels; ++c)
      for (size_t i = 0; i < cols; ++i)
        ASSERT_EQ(block[(c * g + j) * cols + i], tensor[(j * channels + c) * cols + i]);
  scatter_samples(block.data(), g, channels, cols, bias.data(), back.data());
  for (size_t e = 0; e < tensor.size(); ++e)
    ASSERT_FLOAT_EQ(back[e], tensor[e] + bias[(e / cols) % channels]) << "at element " << e;
}

TEST(SampleGroups, GroupedConvolutionsMatchTheReference) {
  uint32_t seed = 100;
  for (const Conv2dShape &s : grouped_shapes()) {
    SCOPED_TRACE(testing::describe(s));
    const size_t scratch = cpu_col_floats(s);
    ASSERT_FALSE(direct_forward_serves(s, scratch));
    ASSERT_FALSE(direct_filter_grad_serves(s, scratch));
    ASSERT_FALSE(direct_data_grad_serves(s, scratch));
    const testing::ConvProblem p = testing::random_problem(s, seed += 10);
    std::vector<float> col(scratch), y(s.y_count(), -7.0f), dw(s.w_count(), -7.0f),
        db(s.b_count(), -7.0f), dx(s.x_count(), -7.0f);
    conv2d_forward_cpu(s, p.x.data(), p.w.data(), p.b.data(), y.data(), col.data());
    testing::expect_close(y, testing::reference_forward(s, p.x, p.w, p.b));
    conv2d_backward_filter_cpu(s, p.x.data(), p.r.data(), dw.data(), db.data(), col.data(), false);
    testing::expect_close(dw, testing::reference_backward_filter(s, p.x, p.r));
    testing::expect_close(db, testing::reference_backward_bias(s, p.r));
    conv2d_backward_data_cpu(s, p.w.data(), p.r.data(), dx.data(), col.data(), false);
    testing::expect_close(dx, testing::reference_backward_data(s, p.w, p.r));
  }
}

TEST(SampleGroups, GroupedGradientsAddToWhatTheOutputHeld) {
  const Conv2dShape s = grouped_shapes()[1];
  const testing::ConvProblem p = testing::random_problem(s, 200);
  const std::vector<float> dw0 = testing::random_floats(s.w_count(), 201),
                           db0 = testing::random_floats(s.b_count(), 202),
                           dx0 = testing::random_floats(s.x_count(), 203);
  std::vector<float> col(cpu_col_floats(s)), dw = dw0, db = db0, dx = dx0;
  conv2d_backward_filter_cpu(s, p.x.data(), p.r.data(), dw.data(), db.data(), col.data(), true);
  conv2d_backward_data_cpu(s, p.w.data(), p.r.data(), dx.data(), col.data(), true);
  std::vector<double> want_dw = testing::reference_backward_filter(s, p.x, p.r),
                      want_db = testing::reference_backward_bias(s, p.r),
                      want_dx = testing::reference_backward_data(s, p.w, p.r);
  for (size_t i = 0; i < want_dw.size(); ++i) want_dw[i] += dw0[i];
  for (size_t i = 0; i < want_db.size(); ++i) want_db[i] += db0[i];
  for (size_t i = 0; i < want_dx.size(); ++i) want_dx[i] += dx0[i];
  testing::expect_close(dw, want_dw);
  testing::expect_close(db, want_db);
  testing::expect_close(dx, want_dx);
}

}  // namespace
}  // namespace starcnn
