#include "codelets/conv2d/conv2d_task_support.h"

#include <stdexcept>

namespace starcnn {

namespace {

// Pointwise shapes read X directly: a one-element placeholder keeps the buffer list fixed.
size_t col_floats(const Conv2dShape &shape) {
  if (!shape.valid()) throw std::invalid_argument("bad conv2d shape");
  return shape.pointwise() ? 1 : shape.col_rows() * shape.col_cols();
}

}  // namespace

ColScratch::ColScratch(const Conv2dShape &shape)
    : ScratchVector(col_floats(shape), sizeof(float)) {}

}  // namespace starcnn
