// Which part of a data set: the training samples or the held-out test samples.
#pragma once

namespace starcnn {

enum class Split { train, test };

inline const char *split_name(Split split) {
  return split == Split::train ? "train" : "test";
}

}  // namespace starcnn
