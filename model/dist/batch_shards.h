// How a data-parallel run cuts each step's global batch across ranks: rank r trains on samples
// [first, first + size) of every global batch, so each sample is used once per epoch across ranks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace starcnn {

struct BatchShard {
  size_t first = 0, size = 0;
};

// Cuts `batch` samples into one shard per weight, sizes proportional to the weights (largest
// remainders get the samples left over; ties go to the lower rank). Throws std::invalid_argument
// when a weight is not positive and finite or a shard would be empty.
std::vector<BatchShard> shard_batch(size_t batch, const std::vector<double> &weights);

// "3,1" -> {3, 1}: one positive weight per rank. Throws std::invalid_argument naming the problem
// when the list does not parse or does not have `ranks` entries.
std::vector<double> parse_rank_shares(const std::string &text, int ranks);

}  // namespace starcnn
