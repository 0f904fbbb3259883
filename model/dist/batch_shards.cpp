#include "model/dist/batch_shards.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

namespace starcnn {

std::vector<BatchShard> shard_batch(size_t batch, const std::vector<double> &weights) {
  if (weights.empty()) throw std::invalid_argument("no rank to cut the batch for");
  double total = 0;
  for (double w : weights) {
    if (!(w > 0) || !std::isfinite(w))
      throw std::invalid_argument("rank shares must be positive numbers");
    total += w;
  }
  const size_t n = weights.size();
  std::vector<size_t> sizes(n);
  std::vector<double> remainders(n);
  size_t given = 0;
  for (size_t r = 0; r < n; ++r) {
    const double exact = double(batch) * weights[r] / total;
    sizes[r] = size_t(std::floor(exact));
    remainders[r] = exact - double(sizes[r]);
    given += sizes[r];
  }
  std::vector<size_t> by_remainder(n);
  std::iota(by_remainder.begin(), by_remainder.end(), 0);
  std::stable_sort(by_remainder.begin(), by_remainder.end(),
                   [&](size_t a, size_t b) { return remainders[a] > remainders[b]; });
  for (size_t i = 0; given < batch; ++i, ++given) ++sizes[by_remainder[i % n]];
  std::vector<BatchShard> shards(n);
  for (size_t r = 0, first = 0; r < n; first += sizes[r], ++r) {
    if (sizes[r] == 0)
      throw std::invalid_argument("rank " + std::to_string(r) +
                                  " would get no sample of the batch of " + std::to_string(batch) +
                                  ": use a larger batch or fewer ranks, or give it a larger share");
    shards[r] = {first, sizes[r]};
  }
  return shards;
}

std::vector<double> parse_rank_shares(const std::string &text, int ranks) {
  std::vector<double> weights;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    char *stop = nullptr;
    const double w = std::strtod(item.c_str(), &stop);
    if (item.empty() || *stop != '\0' || !(w > 0) || !std::isfinite(w))
      throw std::invalid_argument("'" + item + "' is not a positive number (in '" + text + "')");
    weights.push_back(w);
    start = end + 1;
  }
  if (int(weights.size()) != ranks)
    throw std::invalid_argument("'" + text + "' gives " + std::to_string(weights.size()) +
                                " shares for " + std::to_string(ranks) + " ranks");
  return weights;
}

}  // namespace starcnn
