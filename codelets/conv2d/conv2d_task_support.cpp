#include "codelets/conv2d/conv2d_task_support.h"

#include <stdexcept>

namespace starcnn {

ColScratch::ColScratch(const Conv2dShape &shape) {
  // Pointwise shapes read X directly: a one-element placeholder keeps the buffer list fixed.
  const size_t count = shape.pointwise() ? 1 : shape.col_rows() * shape.col_cols();
  if (!shape.valid() || count > UINT32_MAX) throw std::invalid_argument("bad conv2d shape");
  // Home node -1: StarPU allocates it on whichever worker runs the task, and never copies it.
  starpu_vector_data_register(&handle_, -1, 0, static_cast<uint32_t>(count), sizeof(float));
}

}  // namespace starcnn
