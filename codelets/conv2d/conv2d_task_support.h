// Submit-side helpers shared by the three conv2d codelets.
#pragma once

#include <starpu.h>

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_shape.h"

namespace starcnn {

// A STARPU_SCRATCH vector for one sample's im2col matrix (shape.col_rows() x shape.col_cols(),
// a single float for pointwise shapes, which need none).
// Pass it to the task, then hand it back with starpu_data_unregister_submit.
starpu_data_handle_t register_col_scratch(const Conv2dShape &shape);

// The argument of the gradient tasks: the shape and whether to add into the output.
struct Conv2dGradientArgs {
  Conv2dShape shape;
  GradientAccess access = GradientAccess::overwrite;

  bool accumulates() const { return access == GradientAccess::accumulate; }
};

// The arguments a gradient task was submitted with; *first_sample: the first sample of X (dX)
// that the task's block starts at.
inline Conv2dGradientArgs unpack_gradient_args(void *cl_arg, uint32_t *first_sample) {
  Conv2dGradientArgs args;
  starpu_codelet_unpack_args(cl_arg, &args, first_sample);
  return args;
}

}  // namespace starcnn
