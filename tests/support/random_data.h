// Seeded random inputs for tests: every check draws fresh data, and the seed is printed on failure.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace starcnn::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v) x = dist(gen);
  return v;
}

}  // namespace starcnn::testing
