// The expected slowest of n parallel tasks in units of their standard deviation, which the
// simulation charges a step's CPU chains (simulated_models.h), against its closed forms for two and
// three draws and the tabulated values for more (Harter's tables of normal order statistics).
#include "codelets/support/simulated_models.h"

#include <gtest/gtest.h>

#include <cmath>

namespace starcnn {
namespace {

TEST(ExpectedMaxOfNormals, OneDrawOrNoneIsTheMean) {
  EXPECT_EQ(expected_max_of_normals(0), 0.0);
  EXPECT_EQ(expected_max_of_normals(1), 0.0);
}

TEST(ExpectedMaxOfNormals, MatchesTheClosedFormsForTwoAndThree) {
  EXPECT_NEAR(expected_max_of_normals(2), 1.0 / std::sqrt(M_PI), 1e-7);
  EXPECT_NEAR(expected_max_of_normals(3), 1.5 / std::sqrt(M_PI), 1e-7);
}

TEST(ExpectedMaxOfNormals, MatchesTheTablesForMoreDraws) {
  EXPECT_NEAR(expected_max_of_normals(5), 1.16296, 1e-5);
  EXPECT_NEAR(expected_max_of_normals(10), 1.53875, 1e-5);
  EXPECT_NEAR(expected_max_of_normals(15), 1.73591, 1e-5);
}

TEST(ExpectedMaxOfNormals, GrowsWithTheDraws) {
  for (unsigned n = 2; n < 64; ++n)
    EXPECT_GT(expected_max_of_normals(n), expected_max_of_normals(n - 1)) << n;
}

}  // namespace
}  // namespace starcnn
