#include "model/data/batcher.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

// Uniform integer in [0, bound) by rejection, so every value is equally likely.
uint64_t uniform_below(std::mt19937_64 &gen, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  // largest multiple of bound, exclusive
  uint64_t r;
  do r = gen();
  while (r >= limit);
  return r % bound;
}

}  // namespace

std::vector<size_t> shuffled_order(size_t n, uint64_t seed, uint64_t epoch) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(epoch), uint32_t(epoch >> 32)};
  std::mt19937_64 gen(seq);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[uniform_below(gen, i)]);
  return order;
}

Batcher::Batcher(const Dataset &data, const BatchOptions &options)
    : data_(data), options_(options) {
  if (options_.batch_size == 0) throw std::invalid_argument("batch size must be > 0");
  start_epoch(0);
}

void Batcher::start_epoch(uint64_t epoch) {
  epoch_ = epoch;
  if (options_.shuffle) {
    order_ = shuffled_order(data_.count, options_.seed, epoch);
  } else {
    order_.resize(data_.count);
    std::iota(order_.begin(), order_.end(), size_t(0));
  }
}

size_t Batcher::batch_count() const {
  const size_t full = data_.count / options_.batch_size;
  const bool partial = data_.count % options_.batch_size != 0;
  return full + (partial && !options_.drop_last ? 1 : 0);
}

size_t Batcher::batch_size(size_t b) const {
  if (b >= batch_count())
    throw std::out_of_range("batch " + std::to_string(b) + " of " + std::to_string(batch_count()));
  return std::min(options_.batch_size, data_.count - b * options_.batch_size);
}

void Batcher::fill(size_t b, float *images, int32_t *labels) const {
  fill(b, 0, batch_size(b), images, labels);
}

void Batcher::fill(size_t b, size_t first, size_t count, float *images, int32_t *labels) const {
  if (first + count > batch_size(b))
    throw std::out_of_range("samples " + std::to_string(first) + ".." +
                            std::to_string(first + count) + " of batch " + std::to_string(b) +
                            " of " + std::to_string(batch_size(b)));
  const size_t sample = data_.sample_size();
  const size_t *indices = order_.data() + b * options_.batch_size + first;
  for (size_t i = 0; i < count; ++i) {
    const float *src = data_.images.data() + indices[i] * sample;
    std::copy(src, src + sample, images + i * sample);
    labels[i] = data_.labels[indices[i]];
  }
}

Batch Batcher::batch(size_t b) const {
  Batch out;
  out.size = batch_size(b);
  out.images.resize(out.size * data_.sample_size());
  out.labels.resize(out.size);
  fill(b, out.images.data(), out.labels.data());
  return out;
}

}  // namespace starcnn
