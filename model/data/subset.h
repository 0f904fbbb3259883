// Which part of a data set: the training samples or the held-out test samples.
#pragma once

namespace starcnn {

enum class Subset { train, test };

inline const char *subset_name(Subset subset) {
  return subset == Subset::train ? "train" : "test";
}

}  // namespace starcnn
