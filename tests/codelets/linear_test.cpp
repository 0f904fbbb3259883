// Linear layer codelets on CPU workers against float64 references and finite differences, under
// each test scheduler.
#include "codelets/linear.h"
#include "codelets/linear_backward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "codelets/accumulate.h"
#include "codelets/relu.h"
#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/vector_partition.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

// A float64 result with, per element, the sum of the absolute values of its terms: float rounding
// of a sum is bounded by a small multiple of that.
struct Reference {
  std::vector<double> value, magnitude;
};

Reference reference_forward(const std::vector<float> &x, const std::vector<float> &w,
                            const std::vector<float> &b, const LinearShape &s, bool relu) {
  Reference r{std::vector<double>(size_t(s.n) * s.out), std::vector<double>(size_t(s.n) * s.out)};
  for (size_t i = 0; i < s.n; ++i)
    for (size_t o = 0; o < s.out; ++o) {
      double sum = b[o], mag = std::fabs(b[o]);
      for (size_t k = 0; k < s.in; ++k) {
        sum += double(x[i * s.in + k]) * w[o * s.in + k];
        mag += std::fabs(double(x[i * s.in + k]) * w[o * s.in + k]);
      }
      r.value[i * s.out + o] = relu && sum < 0.0 ? 0.0 : sum;
      r.magnitude[i * s.out + o] = mag;
    }
  return r;
}

Reference reference_backward_data(const std::vector<float> &w, const std::vector<float> &dy,
                                  const LinearShape &s) {
  Reference r{std::vector<double>(size_t(s.n) * s.in), std::vector<double>(size_t(s.n) * s.in)};
  for (size_t i = 0; i < s.n; ++i)
    for (size_t k = 0; k < s.in; ++k)
      for (size_t o = 0; o < s.out; ++o) {
        r.value[i * s.in + k] += double(dy[i * s.out + o]) * w[o * s.in + k];
        r.magnitude[i * s.in + k] += std::fabs(double(dy[i * s.out + o]) * w[o * s.in + k]);
      }
  return r;
}

// dW in the first out*in elements, db in the last out.
Reference reference_backward_weights(const std::vector<float> &x, const std::vector<float> &dy,
                                     const LinearShape &s) {
  const size_t nw = size_t(s.out) * s.in;
  Reference r{std::vector<double>(nw + s.out), std::vector<double>(nw + s.out)};
  for (size_t i = 0; i < s.n; ++i)
    for (size_t o = 0; o < s.out; ++o) {
      const double g = dy[i * s.out + o];
      for (size_t k = 0; k < s.in; ++k) {
        r.value[o * s.in + k] += g * x[i * s.in + k];
        r.magnitude[o * s.in + k] += std::fabs(g * x[i * s.in + k]);
      }
      r.value[nw + o] += g;
      r.magnitude[nw + o] += std::fabs(g);
    }
  return r;
}

void expect_near(const std::vector<float> &got, const Reference &want) {
  testing::expect_near_bounds(got, want.value, want.magnitude, 1e-5, 1e-6);
}

std::vector<float> concat(std::vector<float> a, const std::vector<float> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class LinearTest : public testing::CpuSchedulerTest {};

// {n, in, out}: batch 1, one input, one output, odd and non-square sizes.
const LinearShape kShapes[] = {{1, 1, 1},   {1, 7, 1},     {3, 1, 5},    {7, 13, 1},
                               {17, 33, 9}, {64, 100, 10}, {5, 300, 129}};

std::string describe(const LinearShape &s) {
  return "n=" + std::to_string(s.n) + " in=" + std::to_string(s.in) +
         " out=" + std::to_string(s.out);
}

TEST_P(LinearTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (const LinearShape &s : kShapes)
    for (bool relu : {false, true}) {
      SCOPED_TRACE(describe(s) + (relu ? " relu" : ""));
      const auto x = testing::random_floats(size_t(s.n) * s.in, seed++);
      const auto w = testing::random_floats(size_t(s.out) * s.in, seed++);
      const auto b = testing::random_floats(s.out, seed++);
      RegisteredVector xh(x), wh(w), bh(b), yh(size_t(s.n) * s.out, -7.0f);
      submit_linear_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(), s, relu);
      expect_near(yh.read(), reference_forward(x, w, b, s, relu));
    }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 2 * int(std::size(kShapes)));
}

TEST_P(LinearTest, BackwardMatchesReference) {
  uint32_t seed = 100;
  for (const LinearShape &s : kShapes) {
    SCOPED_TRACE(describe(s));
    const auto x = testing::random_floats(size_t(s.n) * s.in, seed++);
    const auto w = testing::random_floats(size_t(s.out) * s.in, seed++);
    const auto dy = testing::random_floats(size_t(s.n) * s.out, seed++);
    RegisteredVector xh(x), wh(w), dyh(dy), dxh(x.size(), -7.0f), dwh(w.size(), -7.0f),
        dbh(s.out, -7.0f);
    submit_linear_backward_data(wh.handle(), dyh.handle(), dxh.handle(), s);
    submit_linear_backward_weights(xh.handle(), dyh.handle(), dwh.handle(), dbh.handle(), s);
    expect_near(dxh.read(), reference_backward_data(w, dy, s));
    expect_near(concat(dwh.read(), dbh.read()), reference_backward_weights(x, dy, s));
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 2 * int(std::size(kShapes)));
}

// The fused backward (one task: the ReLU's backward, dW, db and dX) against the references, with
// the ReLU's mask applied in the test (dZ = dY where Y > 0); without dX for a first layer.
TEST_P(LinearTest, FusedBackwardMatchesReference) {
  uint32_t seed = 300;
  int tasks = 0;
  for (const LinearShape &s : kShapes)
    for (bool relu : {false, true})
      for (bool input_grad : {true, false}) {
        SCOPED_TRACE(describe(s) + (relu ? " relu" : "") + (input_grad ? "" : " no dx"));
        const auto x = testing::random_floats(size_t(s.n) * s.in, seed++);
        const auto w = testing::random_floats(size_t(s.out) * s.in, seed++);
        const auto b = testing::random_floats(s.out, seed++);
        const auto dy = testing::random_floats(size_t(s.n) * s.out, seed++);
        const std::vector<double> y = reference_forward(x, w, b, s, relu).value;
        std::vector<float> yf(y.begin(), y.end()), dz = dy;
        for (size_t i = 0; relu && i < dz.size(); ++i)
          if (!(yf[i] > 0.0f)) dz[i] = 0.0f;
        RegisteredVector xh(x), wh(w), dyh(dy), yh(yf), dzh(dy.size(), -7.0f), dxh(x.size(), -7.0f),
            dwh(w.size(), -7.0f), dbh(s.out, -7.0f);
        submit_linear_backward(xh.handle(), wh.handle(), dyh.handle(), dwh.handle(), dbh.handle(),
                               relu ? yh.handle() : nullptr, relu ? dzh.handle() : nullptr,
                               input_grad ? dxh.handle() : nullptr, s, Where::cpu);
        ++tasks;
        expect_near(concat(dwh.read(), dbh.read()), reference_backward_weights(x, dz, s));
        if (input_grad) {
          expect_near(dxh.read(), reference_backward_data(w, dz, s));
        } else {
          EXPECT_EQ(dxh.read(), std::vector<float>(x.size(), -7.0f));
        }
        if (relu) {
          EXPECT_EQ(dzh.read(), dz);
        }
      }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, tasks);
}

TEST_P(LinearTest, FusedBackwardRefusesBadHandles) {
  const LinearShape s{2, 3, 4};
  RegisteredVector x(6), w(12), dy(8), dw(12), db(4), y(8), dz(8), dx(6), shorter(5);
  EXPECT_THROW(submit_linear_backward(x.handle(), w.handle(), dy.handle(), dw.handle(), db.handle(),
                                      y.handle(), nullptr, dx.handle(), s),
               std::invalid_argument);
  EXPECT_THROW(submit_linear_backward(x.handle(), w.handle(), dy.handle(), dw.handle(), db.handle(),
                                      nullptr, nullptr, shorter.handle(), s),
               std::invalid_argument);
  EXPECT_THROW(submit_linear_backward(shorter.handle(), w.handle(), dy.handle(), dw.handle(),
                                      db.handle(), nullptr, nullptr, nullptr, s),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
}

// Central differences, in double, of loss = sum(out * R) with out = relu?(X W^T + b); the tasks
// get dY = R, through relu_backward when the ReLU is fused.
TEST_P(LinearTest, BackwardMatchesFiniteDifferences) {
  const LinearShape shapes[] = {{4, 6, 3}, {1, 5, 1}, {3, 2, 7}};
  uint32_t seed = 200;
  for (const LinearShape &s : shapes)
    for (bool relu : {false, true}) {
      SCOPED_TRACE(describe(s) + (relu ? " relu" : ""));
      auto x = testing::random_floats(size_t(s.n) * s.in, seed++);
      auto w = testing::random_floats(size_t(s.out) * s.in, seed++);
      auto b = testing::random_floats(s.out, seed++);
      const auto r = testing::random_floats(size_t(s.n) * s.out, seed++);

      RegisteredVector xh(x), wh(w), bh(b), yh(r.size(), -7.0f), rh(r), dpre(r.size(), -7.0f);
      RegisteredVector dxh(x.size(), -7.0f), dwh(w.size(), -7.0f), dbh(b.size(), -7.0f);
      submit_linear_forward(xh.handle(), wh.handle(), bh.handle(), yh.handle(), s, relu);
      starpu_data_handle_t dy = rh.handle();
      if (relu) {
        submit_relu_backward(yh.handle(), rh.handle(), dpre.handle());
        dy = dpre.handle();
      }
      submit_linear_backward_data(wh.handle(), dy, dxh.handle(), s);
      submit_linear_backward_weights(xh.handle(), dy, dwh.handle(), dbh.handle(), s);

      const auto loss = [&] {
        const auto out = reference_forward(x, w, b, s, relu).value;
        double sum = 0.0;
        for (size_t i = 0; i < out.size(); ++i) sum += out[i] * r[i];
        return sum;
      };
      // Perturbs each element of v in turn, by steps small enough not to cross a ReLU kink here,
      // dividing by the step actually taken in float.
      const auto check = [&](std::vector<float> &v, const std::vector<float> &got,
                             const char *name) {
        const float h = 1.0f / 4096;
        for (size_t i = 0; i < v.size(); ++i) {
          const float saved = v[i];
          v[i] = saved + h;
          const double up = loss(), step_up = v[i];
          v[i] = saved - h;
          const double down = loss(), step_down = v[i];
          v[i] = saved;
          EXPECT_NEAR(got[i], (up - down) / (step_up - step_down), 1e-4)
              << name << " element " << i;
        }
      };
      check(x, dxh.read(), "dX");
      check(w, dwh.read(), "dW");
      check(b, dbh.read(), "db");
    }
}

// Uneven sub-batches, each its own task, with dW and db summed through STARPU_REDUX, give the
// whole batch's results; a second pass after zeroing, its sums kept to the CPU workers, gives
// them again (not twice them).
TEST_P(LinearTest, SubBatchesWithReductionEqualTheWhole) {
  const LinearShape s{37, 19, 11};
  const std::vector<uint32_t> samples = {1, 16, 13, 7};
  const auto x = testing::random_floats(size_t(s.n) * s.in, 300);
  const auto w = testing::random_floats(size_t(s.out) * s.in, 301);
  const auto b = testing::random_floats(s.out, 302);
  const auto dy = testing::random_floats(size_t(s.n) * s.out, 303);

  RegisteredVector xh(x), wh(w), bh(b), dyh(dy), yh(dy.size(), -7.0f), dxh(x.size(), -7.0f);
  RegisteredVector dwh(w.size(), -7.0f), dbh(b.size(), -7.0f);
  testing::partition_samples(xh.handle(), samples, s.in);
  testing::partition_samples(dxh.handle(), samples, s.in);
  testing::partition_samples(yh.handle(), samples, s.out);
  testing::partition_samples(dyh.handle(), samples, s.out);
  for (int pass = 0; pass < 2; ++pass) {
    const Where sums = pass == 0 ? Where::any : Where::cpu;
    set_sum_reduction(dwh.handle(), sums);
    set_sum_reduction(dbh.handle(), sums);
    submit_zero_fill(dwh.handle());
    submit_zero_fill(dbh.handle());
    for (unsigned p = 0; p < samples.size(); ++p) {
      const LinearShape part{samples[p], s.in, s.out};
      const auto sub = [p](const RegisteredVector &v) {
        return starpu_data_get_sub_data(v.handle(), 1, p);
      };
      submit_linear_forward(sub(xh), wh.handle(), bh.handle(), sub(yh), part, true);
      submit_linear_backward_data(wh.handle(), sub(dyh), sub(dxh), part);
      submit_linear_backward_weights(sub(xh), sub(dyh), dwh.handle(), dbh.handle(), part,
                                     GradientAccess::accumulate);
    }
    SCOPED_TRACE("pass " + std::to_string(pass));
    expect_near(concat(dwh.read(), dbh.read()), reference_backward_weights(x, dy, s));
  }
  for (RegisteredVector *v : {&xh, &dxh, &yh, &dyh})
    starpu_data_unpartition(v->handle(), STARPU_MAIN_RAM);
  expect_near(yh.read(), reference_forward(x, w, b, s, true));
  expect_near(dxh.read(), reference_backward_data(w, dy, s));
}

TEST_P(LinearTest, WrongHandleSizesAreRefused) {
  const LinearShape s{2, 3, 4};
  RegisteredVector x(6), w(12), b(4), y(8), bad(5);
  EXPECT_THROW(submit_linear_forward(x.handle(), w.handle(), b.handle(), bad.handle(), s),
               std::invalid_argument);
  EXPECT_THROW(submit_linear_backward_data(w.handle(), bad.handle(), x.handle(), s),
               std::invalid_argument);
  EXPECT_THROW(submit_linear_backward_weights(x.handle(), y.handle(), w.handle(), bad.handle(), s),
               std::invalid_argument);
  EXPECT_THROW(submit_linear_forward(x.handle(), w.handle(), b.handle(), y.handle(), {0, 3, 4}),
               std::invalid_argument);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(LinearTest);

}  // namespace
}  // namespace starcnn
