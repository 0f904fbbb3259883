// Submit-side helpers shared by the three conv2d codelets.
#pragma once

#include <starpu.h>

#include "codelets/conv2d_shape.h"

namespace starcnn {

// A STARPU_SCRATCH vector for one sample's im2col matrix (shape.col_rows() x shape.col_cols(),
// a single float for pointwise shapes, which need none).
// Pass it to the task, then hand it back with starpu_data_unregister_submit.
starpu_data_handle_t register_col_scratch(const Conv2dShape &shape);

// STARPU_W to overwrite a gradient, STARPU_REDUX to add into it with the other tasks' sums.
inline starpu_data_access_mode gradient_mode(GradientAccess access) {
  return access == GradientAccess::accumulate ? STARPU_REDUX : STARPU_W;
}

}  // namespace starcnn
