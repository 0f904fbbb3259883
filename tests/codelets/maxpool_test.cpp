// Maxpool 2x2/2 codelets on CPU workers against a float64 reference, under each test scheduler.
#include "codelets/maxpool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "tests/support/random_data.h"
#include "tests/support/registered_int_vector.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredIntVector;
using testing::RegisteredVector;

struct Pooled {
  std::vector<double> p;
  std::vector<int32_t> argmax;  // h * W + w inside the plane
};

// Naive pooling in double: scan each window row by row, keep the first strict maximum.
Pooled reference_maxpool(const std::vector<double> &x, const MaxpoolShape &s) {
  const size_t oh_count = s.height / 2, ow_count = s.width / 2;
  Pooled out;
  for (size_t plane = 0; plane < size_t(s.n) * s.channels; ++plane)
    for (size_t oh = 0; oh < oh_count; ++oh)
      for (size_t ow = 0; ow < ow_count; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        int32_t where = -1;
        for (size_t h = 2 * oh; h < 2 * oh + 2; ++h)
          for (size_t w = 2 * ow; w < 2 * ow + 2; ++w) {
            const double v = x[(plane * s.height + h) * s.width + w];
            if (where < 0 || v > best) best = v, where = int32_t(h * s.width + w);
          }
        out.p.push_back(best);
        out.argmax.push_back(where);
      }
  return out;
}

std::vector<double> to_double(const std::vector<float> &v) {
  return {v.begin(), v.end()};
}

// d(sum(P * R))/dX: R at each window's maximum, zero elsewhere (odd rows and columns included).
std::vector<double> reference_backward(const std::vector<float> &x, const std::vector<float> &r,
                                       const MaxpoolShape &s) {
  const Pooled pooled = reference_maxpool(to_double(x), s);
  std::vector<double> dx(x.size(), 0.0);
  const size_t out_plane = size_t(s.height / 2) * (s.width / 2);
  for (size_t o = 0; o < pooled.argmax.size(); ++o)
    dx[o / out_plane * s.height * s.width + size_t(pooled.argmax[o])] = r[o];
  return dx;
}

// maxpool(relu(x)) in double, and its gradient of sum(P * R): R at the maximum of each window
// whose maximum is positive. Argmax -1 marks the other windows.
Pooled reference_relu_maxpool(const std::vector<double> &x, const MaxpoolShape &s) {
  std::vector<double> relu(x.size());
  for (size_t i = 0; i < x.size(); ++i) relu[i] = x[i] > 0.0 ? x[i] : 0.0;
  Pooled out = reference_maxpool(relu, s);
  for (size_t o = 0; o < out.p.size(); ++o)
    if (out.p[o] == 0.0) out.argmax[o] = -1;
  return out;
}

std::vector<double> reference_relu_backward(const std::vector<float> &x,
                                            const std::vector<float> &r, const MaxpoolShape &s) {
  std::vector<double> dx = reference_backward(x, r, s);
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] > 0.0f)) dx[i] = 0.0;
  return dx;
}

// Distinct values at least 2/size apart in random order, none of them zero: no window holds
// near-ties and no value sits on ReLU's kink.
std::vector<float> tie_free_floats(size_t size, uint32_t seed) {
  std::vector<float> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = (float(i) + 0.5f) / float(size) * 2.0f - 1.0f;
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

// n, C, H, W: odd sizes, batch 1, one channel, non-square, a single window.
const MaxpoolShape kShapes[] = {{1, 1, 2, 2},  {1, 3, 5, 7}, {2, 1, 4, 6},    {3, 4, 9, 8},
                                {2, 5, 13, 3}, {1, 1, 3, 2}, {4, 16, 28, 28}, {5, 2, 7, 12}};

std::string describe(const MaxpoolShape &s) {
  return "n=" + std::to_string(s.n) + " C=" + std::to_string(s.channels) +
         " H=" + std::to_string(s.height) + " W=" + std::to_string(s.width);
}

// dx against central differences of L(x) = sum(pool(x) * r) in double, pool being a float64
// reference forward.
template <typename Pool>
void expect_matches_differences(const std::vector<float> &dx, const std::vector<float> &x,
                                const std::vector<float> &r, Pool pool) {
  ASSERT_EQ(dx.size(), x.size());
  const double eps = 1e-4;  // far below the 1/size gap between input values
  auto loss = [&](const std::vector<double> &xd) {
    const Pooled pooled = pool(xd);
    double sum = 0.0;
    for (size_t o = 0; o < r.size(); ++o) sum += pooled.p[o] * r[o];
    return sum;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> plus = to_double(x), minus = to_double(x);
    plus[i] += eps;
    minus[i] -= eps;
    ASSERT_NEAR(dx[i], (loss(plus) - loss(minus)) / (2 * eps), 1e-6) << "at element " << i;
  }
}

class MaxpoolTest : public testing::CpuSchedulerTest {};

// Pools x with a forward task and compares P and argmax with the float64 reference.
void expect_forward_matches_reference(const std::vector<float> &x, const MaxpoolShape &s) {
  RegisteredVector xh(x), ph(s.out_size(), -7.0f);
  RegisteredIntVector ah(s.out_size(), -7);
  submit_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s);
  const Pooled want = reference_maxpool(to_double(x), s);
  EXPECT_EQ(to_double(ph.read()), want.p);
  EXPECT_EQ(ah.read(), want.argmax);
}

TEST_P(MaxpoolTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (const MaxpoolShape &s : kShapes) {
    SCOPED_TRACE(describe(s));
    expect_forward_matches_reference(testing::random_floats(s.in_size(), ++seed), s);
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, int(std::size(kShapes)));
}

// Values from {-1, 0, 1} make most windows hold ties: the first maximum in scan order wins.
TEST_P(MaxpoolTest, TiesGoToTheFirstMaximum) {
  const MaxpoolShape s{3, 2, 6, 5};
  std::mt19937 gen(7);
  std::vector<float> x(s.in_size());
  for (float &v : x) v = float(int(gen() % 3) - 1);
  expect_forward_matches_reference(x, s);
  // A window of equal values points at its top-left element.
  std::vector<float> flat(16, 0.5f);
  RegisteredVector fh(flat), fph(4, -7.0f);
  RegisteredIntVector fah(4, -7);
  submit_maxpool_forward(fh.handle(), fph.handle(), fah.handle(), {1, 1, 4, 4});
  EXPECT_EQ(fah.read(), (std::vector<int32_t>{0, 2, 8, 10}));
}

// Like PyTorch, a NaN in a window is the window's maximum.
TEST_P(MaxpoolTest, NanWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  RegisteredVector xh({1.0f, 5.0f, nan, 2.0f}), ph(1, -7.0f);
  RegisteredIntVector ah(1, -7);
  submit_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), {1, 1, 2, 2});
  EXPECT_TRUE(std::isnan(ph.read()[0]));
  EXPECT_EQ(ah.read()[0], 2);
}

TEST_P(MaxpoolTest, BackwardMatchesReference) {
  uint32_t seed = 100;
  for (const MaxpoolShape &s : kShapes) {
    SCOPED_TRACE(describe(s));
    const auto x = testing::random_floats(s.in_size(), ++seed);
    const auto dp = testing::random_floats(s.out_size(), ++seed);
    RegisteredVector xh(x), ph(s.out_size()), dph(dp), dxh(s.in_size(), -7.0f);
    RegisteredIntVector ah(s.out_size());
    submit_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s);
    submit_maxpool_backward(dph.handle(), ah.handle(), dxh.handle(), s);
    EXPECT_EQ(to_double(dxh.read()), reference_backward(x, dp, s));
  }
}

// The backward is the gradient of L = sum(P * R): compare with central differences of the
// float64 forward, on inputs whose windows have no near-ties.
TEST_P(MaxpoolTest, BackwardMatchesFiniteDifferences) {
  for (const MaxpoolShape &s : {MaxpoolShape{2, 3, 5, 7}, MaxpoolShape{1, 2, 6, 4}}) {
    SCOPED_TRACE(describe(s));
    const auto x = tie_free_floats(s.in_size(), 3);
    const auto r = testing::random_floats(s.out_size(), 4);
    RegisteredVector xh(x), ph(s.out_size()), rh(r), dxh(s.in_size(), -7.0f);
    RegisteredIntVector ah(s.out_size());
    submit_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s);
    submit_maxpool_backward(rh.handle(), ah.handle(), dxh.handle(), s);
    expect_matches_differences(
        dxh.read(), x, r, [&](const std::vector<double> &xd) { return reference_maxpool(xd, s); });
  }
}

TEST_P(MaxpoolTest, FusedReluMatchesReference) {
  uint32_t seed = 200;
  for (const MaxpoolShape &s : kShapes) {
    SCOPED_TRACE(describe(s));
    const auto x = testing::random_floats(s.in_size(), ++seed);
    const auto dp = testing::random_floats(s.out_size(), ++seed);
    RegisteredVector xh(x), ph(s.out_size(), -7.0f), dph(dp), dxh(s.in_size(), -7.0f);
    RegisteredIntVector ah(s.out_size(), -7);
    submit_relu_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s);
    submit_maxpool_backward(dph.handle(), ah.handle(), dxh.handle(), s);
    const Pooled want = reference_relu_maxpool(to_double(x), s);
    EXPECT_EQ(to_double(ph.read()), want.p);
    EXPECT_EQ(ah.read(), want.argmax);
    EXPECT_EQ(to_double(dxh.read()), reference_relu_backward(x, dp, s));
  }
  // A window of negatives pools to 0 and passes no gradient back.
  RegisteredVector xh({-3.0f, -1.0f, -2.0f, -0.5f}), ph(1, -7.0f), dph(std::vector<float>{1.0f}),
      dxh(4, -7.0f);
  RegisteredIntVector ah(1, -7);
  submit_relu_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), {1, 1, 2, 2});
  submit_maxpool_backward(dph.handle(), ah.handle(), dxh.handle(), {1, 1, 2, 2});
  EXPECT_EQ(ph.read()[0], 0.0f);
  EXPECT_EQ(ah.read()[0], -1);
  EXPECT_EQ(dxh.read(), std::vector<float>(4, 0.0f));
}

// The fused forward's backward against central differences of maxpool(relu(x)) in double.
TEST_P(MaxpoolTest, FusedReluBackwardMatchesFiniteDifferences) {
  const MaxpoolShape s{2, 3, 6, 5};
  const auto x = tie_free_floats(s.in_size(), 8);
  const auto r = testing::random_floats(s.out_size(), 9);
  RegisteredVector xh(x), ph(s.out_size()), rh(r), dxh(s.in_size(), -7.0f);
  RegisteredIntVector ah(s.out_size());
  submit_relu_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s);
  submit_maxpool_backward(rh.handle(), ah.handle(), dxh.handle(), s);
  expect_matches_differences(dxh.read(), x, r, [&](const std::vector<double> &xd) {
    return reference_relu_maxpool(xd, s);
  });
}

// Uneven sub-batches, each its own forward and backward task, give the same result as the whole.
TEST_P(MaxpoolTest, SubBatchesCoverTheWhole) {
  const MaxpoolShape whole{7, 3, 9, 6};
  const uint32_t samples[] = {1, 4, 2};
  const auto x = testing::random_floats(whole.in_size(), 21);
  const auto dp = testing::random_floats(whole.out_size(), 22);
  RegisteredVector xh(x), ph(whole.out_size(), -7.0f), dph(dp), dxh(whole.in_size(), -7.0f);
  RegisteredIntVector ah(whole.out_size(), -7);

  uint32_t in_lengths[3], out_lengths[3];
  for (int part = 0; part < 3; ++part) {
    const MaxpoolShape s{samples[part], whole.channels, whole.height, whole.width};
    in_lengths[part] = uint32_t(s.in_size());
    out_lengths[part] = uint32_t(s.out_size());
  }
  starpu_data_filter in_filter{}, out_filter{};
  in_filter.filter_func = out_filter.filter_func = starpu_vector_filter_list;
  in_filter.nchildren = out_filter.nchildren = 3;
  in_filter.filter_arg_ptr = in_lengths;
  out_filter.filter_arg_ptr = out_lengths;
  for (starpu_data_handle_t h : {xh.handle(), dxh.handle()}) starpu_data_partition(h, &in_filter);
  for (starpu_data_handle_t h : {ph.handle(), dph.handle(), ah.handle()})
    starpu_data_partition(h, &out_filter);
  for (unsigned part = 0; part < 3; ++part) {
    const MaxpoolShape s{samples[part], whole.channels, whole.height, whole.width};
    auto sub = [part](starpu_data_handle_t h) { return starpu_data_get_sub_data(h, 1, part); };
    submit_maxpool_forward(sub(xh.handle()), sub(ph.handle()), sub(ah.handle()), s);
    submit_maxpool_backward(sub(dph.handle()), sub(ah.handle()), sub(dxh.handle()), s);
  }
  for (starpu_data_handle_t h : {xh.handle(), dxh.handle(), ph.handle(), dph.handle(), ah.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);

  const Pooled want = reference_maxpool(to_double(x), whole);
  EXPECT_EQ(to_double(ph.read()), want.p);
  EXPECT_EQ(ah.read(), want.argmax);
  EXPECT_EQ(to_double(dxh.read()), reference_backward(x, dp, whole));
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 6);
}

TEST_P(MaxpoolTest, CudaOnlyTaskWithoutCudaWorkerIsRefused) {
  STARCNN_SKIP_WHERE_A_GPU_EXISTS();
  const MaxpoolShape s{1, 1, 2, 2};
  RegisteredVector xh(4), ph(1);
  RegisteredIntVector ah(1);
  EXPECT_THROW(submit_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s, Where::cuda),
               std::runtime_error);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(MaxpoolTest);

}  // namespace
}  // namespace starcnn
