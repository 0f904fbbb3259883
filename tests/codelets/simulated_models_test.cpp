// The expected k-th fastest of n parallel tasks in units of their standard deviation, which the
// simulation charges a step's CPU chains (simulated_models.h), against its closed forms for two and
// three draws, the tabulated values for more (Harter's tables of normal order statistics), and the
// identities every order statistic of a symmetric distribution meets.
#include "codelets/support/simulated_models.h"

#include <gtest/gtest.h>

#include <cmath>

namespace starcnn {
namespace {

// The expected largest of n draws, the order statistic the slowest chain is charged.
double largest_of(unsigned n) {
  return expected_order_statistic_of_normals(n, n);
}

TEST(ExpectedMaxOfNormals, OneDrawOrNoneIsTheMean) {
  EXPECT_EQ(largest_of(0), 0.0);
  EXPECT_EQ(largest_of(1), 0.0);
}

TEST(ExpectedMaxOfNormals, MatchesTheClosedFormsForTwoAndThree) {
  EXPECT_NEAR(largest_of(2), 1.0 / std::sqrt(M_PI), 1e-7);
  EXPECT_NEAR(largest_of(3), 1.5 / std::sqrt(M_PI), 1e-7);
}

TEST(ExpectedMaxOfNormals, MatchesTheTablesForMoreDraws) {
  EXPECT_NEAR(largest_of(5), 1.16296, 1e-5);
  EXPECT_NEAR(largest_of(10), 1.53875, 1e-5);
  EXPECT_NEAR(largest_of(15), 1.73591, 1e-5);
}

TEST(ExpectedMaxOfNormals, GrowsWithTheDraws) {
  for (unsigned n = 2; n < 64; ++n) EXPECT_GT(largest_of(n), largest_of(n - 1)) << n;
}

TEST(ExpectedOrderStatisticOfNormals, OutOfRangeIsTheMean) {
  EXPECT_EQ(expected_order_statistic_of_normals(0, 5), 0.0);
  EXPECT_EQ(expected_order_statistic_of_normals(6, 5), 0.0);
  EXPECT_EQ(expected_order_statistic_of_normals(1, 1), 0.0);
}

TEST(ExpectedOrderStatisticOfNormals, MatchesTheClosedFormsAndTables) {
  EXPECT_NEAR(expected_order_statistic_of_normals(1, 2), -1.0 / std::sqrt(M_PI), 1e-7);
  EXPECT_NEAR(expected_order_statistic_of_normals(2, 3), 0.0, 1e-9);
  EXPECT_NEAR(expected_order_statistic_of_normals(4, 5), 0.49502, 1e-5);
  EXPECT_NEAR(expected_order_statistic_of_normals(9, 10), 1.00136, 1e-5);
}

TEST(ExpectedOrderStatisticOfNormals, IsSymmetricIncreasingAndAveragesToTheMean) {
  for (unsigned n = 2; n <= 16; ++n) {
    double sum = 0;
    for (unsigned k = 1; k <= n; ++k) {
      const double z = expected_order_statistic_of_normals(k, n);
      sum += z;
      EXPECT_NEAR(z, -expected_order_statistic_of_normals(n + 1 - k, n), 1e-8) << k << " of " << n;
      if (k > 1) {
        EXPECT_GT(z, expected_order_statistic_of_normals(k - 1, n)) << k << " of " << n;
      }
    }
    EXPECT_NEAR(sum, 0.0, 1e-7) << n;  // the n order statistics sum to n draws
  }
}

}  // namespace
}  // namespace starcnn
