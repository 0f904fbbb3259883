// Element-wise comparisons of a float32 result with its reference (float64 or float32), each
// failing at the first element out of bounds and naming it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

namespace starcnn::testing {

// How many of the n floats of `a` and `b` differ in their bits: for results two devices must
// compute identically (the same float operations in the same order), not merely closely.
inline size_t count_bit_differences(const float *a, const float *b, size_t n) {
  size_t differing = 0;
  for (size_t i = 0; i < n; ++i) differing += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return differing;
}

// The largest |v|, to scale tolerances of results that differ only by summation order.
template <typename T>
double max_abs(const std::vector<T> &v) {
  double m = 0.0;
  for (T e : v) m = std::max(m, std::fabs(double(e)));
  return m;
}

// |got - want| <= tol for every element.
template <typename Want>
void expect_near(const std::vector<float> &got, const std::vector<Want> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "at element " << i;
}

// |got - want| <= rel * (1 + |want|) for every element: relative, with an absolute floor near 0.
template <typename Want>
void expect_close(const std::vector<float> &got, const std::vector<Want> &want, double rel = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = double(want[i]);
    ASSERT_LE(std::fabs(double(got[i]) - w), rel * (1.0 + std::fabs(w)))
        << "at element " << i << ": got " << got[i] << ", want " << w;
  }
}

// |got - want| <= rel * (1 + max |want|) for every element: for results whose rounding spreads
// over the whole tensor (other summation orders, FFT or Winograd convolutions).
template <typename Want>
void expect_near_scaled(const std::vector<float> &got, const std::vector<Want> &want, double rel) {
  expect_near(got, want, rel * (1.0 + max_abs(want)));
}

// |got - want| <= rel * bound + abs element by element, with bound[i] the sum of the magnitudes
// of the terms summed into want[i] (float rounding of a sum is bounded by a multiple of it).
template <typename Want, typename Bound>
void expect_near_bounds(const std::vector<float> &got, const std::vector<Want> &want,
                        const std::vector<Bound> &bound, double rel, double abs) {
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(bound.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], rel * double(bound[i]) + abs) << "at element " << i;
}

}  // namespace starcnn::testing
