// A convolution layer cut by its plan (filter parts, a CPU part cut into sample blocks) computes
// what the whole layer computes: output, input gradient and parameter gradients, forward and
// backward, on random data, for several cuts and schedulers.
#include "model/nn/conv_layer.h"

#include "tests/support/random_data.h"
#include "tests/support/scheduler_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace starcnn {
namespace {

class ConvLayerTest : public testing::CpuSchedulerTest {};

struct LayerResult {
  std::vector<float> y, dx, dw, db;
};

std::vector<float> concatenated_grads(Parameter &p) {
  std::vector<float> all;
  for (size_t part = 0; part < p.part_count(); ++part) {
    const std::vector<float> g = p.grad(part).read();
    all.insert(all.end(), g.begin(), g.end());
  }
  return all;
}

// One forward and backward of a layer planned `plan_text`, from the same weights and data. The
// backward runs twice: a second step must not add onto the first one's gradients.
LayerResult run_layer(const Conv2dShape &s, const std::string &plan_text) {
  const SplitPlan plan = parse_split_plan(plan_text, int(s.c_out), {2, 0});
  std::vector<int> rows;
  for (const SplitPart &part : plan.parts) rows.push_back(part.filters);
  Parameter weight("conv.weight", {int(s.c_out), int(s.c_in), int(s.k), int(s.k)}, rows);
  Parameter bias("conv.bias", {int(s.c_out)}, rows);
  weight.write(testing::random_floats(s.w_count(), 11));
  bias.write(testing::random_floats(s.b_count(), 12));
  Tensor x({int(s.n), int(s.c_in), int(s.h), int(s.w)}, "x");
  Tensor dy({int(s.n), int(s.c_out), int(s.out_h()), int(s.out_w())}, "dy");
  x.write(testing::random_floats(s.x_count(), 13));
  dy.write(testing::random_floats(s.y_count(), 14));
  ConvLayer layer(s, weight, bias, plan);
  for (int step = 0; step < 2; ++step) {
    layer.forward(x);
    layer.backward(x, dy, true);
  }
  return {layer.output().read(), layer.input_grad().read(), concatenated_grads(weight),
          concatenated_grads(bias)};
}

void expect_close(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (float v : want) scale = std::max(scale, double(std::fabs(v)));
  ASSERT_GT(scale, 0.0) << what << " is all zeros";
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * scale) << what << " element " << i;
}

TEST_P(ConvLayerTest, CutLayersComputeWhatTheWholeLayerDoes) {
  const Conv2dShape s{7, 3, 9, 9, 6, 3, 1, 1};
  const LayerResult whole = run_layer(s, "6@any");
  for (const char *plan : {"2@cpu/3,4@any", "6@cpu/4", "1@any/2,3@cpu/7,2@any", "6@any/7"}) {
    SCOPED_TRACE(plan);
    const LayerResult cut = run_layer(s, plan);
    expect_close(cut.y, whole.y, "output");
    expect_close(cut.dx, whole.dx, "input gradient");
    expect_close(cut.dw, whole.dw, "weight gradient");
    expect_close(cut.db, whole.db, "bias gradient");
  }
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(ConvLayerTest);

}  // namespace
}  // namespace starcnn
