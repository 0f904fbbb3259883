// Submit-side helpers shared by the three conv2d codelets.
#pragma once

#include <starpu.h>

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/support/scratch_vector.h"

namespace starcnn {

// A STARPU_SCRATCH vector for the CPU kernels' im2col matrices (cpu_col_floats(shape) floats,
// sample_groups.h). Pass handle() to the task; it is handed back when this goes out of scope, the
// task submitted or not.
class ColScratch : public ScratchVector {
 public:
  explicit ColScratch(const Conv2dShape &shape);
};

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
