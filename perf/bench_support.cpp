#include "perf/bench_support.h"

#include <algorithm>
#include <random>

namespace starcnn {

Dataset random_dataset(const NetworkSpec &spec, size_t count, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255), label(0, 9);
  const size_t c = size_t(spec.input.c), h = size_t(spec.input.h), w = size_t(spec.input.w);
  std::vector<uint8_t> pixels(count * c * h * w), labels(count);
  for (uint8_t &p : pixels) p = uint8_t(byte(gen));
  for (uint8_t &l : labels) l = uint8_t(label(gen));
  Preprocess pre;
  pre.mean.assign(c, 0.5f);
  pre.stddev.assign(c, 0.25f);
  return make_dataset(pixels.data(), labels.data(), count, c, h, w, 10, pre);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace starcnn
