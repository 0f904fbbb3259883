// Cuts a data set into mini-batches: a seeded shuffle per epoch (reproducible on every platform),
// and batches copied into contiguous buffers, images [B, C, H, W] float and labels [B] int32.
#pragma once

#include "model/data/dataset.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace starcnn {

struct BatchOptions {
  size_t batch_size = 64;
  bool shuffle = true;     // false: samples in data set order every epoch
  uint64_t seed = 1;       // with the epoch number, decides the order of that epoch
  bool drop_last = false;  // drop the last batch when it is shorter than batch_size
};

struct Batch {
  size_t size = 0;              // samples in this batch (the last one may be short)
  std::vector<float> images;    // [size, C, H, W]
  std::vector<int32_t> labels;  // [size]
};

class Batcher {
 public:
  // Keeps a reference to data, which must outlive the batcher. Starts at epoch 0.
  Batcher(const Dataset &data, const BatchOptions &options);

  // Sets the sample order of the given epoch; it depends only on the seed and the epoch number,
  // so a resumed run can jump straight to its epoch.
  void start_epoch(uint64_t epoch);
  uint64_t epoch() const { return epoch_; }

  size_t batch_count() const;
  size_t batch_size(size_t b) const;  // samples in batch b
  // Sample indices of the current epoch, in order.
  const std::vector<size_t> &order() const { return order_; }

  // Copies batch b of the current epoch into caller buffers (for example pinned StarPU memory)
  // of at least batch_size(b) * data.sample_size() floats and batch_size(b) labels.
  void fill(size_t b, float *images, int32_t *labels) const;
  // The same for `count` samples of batch b from its sample `first` on (a micro-batch).
  void fill(size_t b, size_t first, size_t count, float *images, int32_t *labels) const;
  Batch batch(size_t b) const;

 private:
  const Dataset &data_;
  BatchOptions options_;
  uint64_t epoch_ = 0;
  std::vector<size_t> order_;
};

// A permutation of 0..n-1 drawn by Fisher-Yates from std::mt19937_64 seeded with (seed, epoch).
// Written out rather than std::shuffle, whose algorithm differs between standard libraries.
std::vector<size_t> shuffled_order(size_t n, uint64_t seed, uint64_t epoch);

}  // namespace starcnn
