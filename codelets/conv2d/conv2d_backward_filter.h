// Weight and bias gradients of one filter slice: dW_p = sum over samples of dY_p (*) X, and
// db_p = sum of dY_p over samples and positions. X and dY_p may hold a sub-batch; several
// sub-batch tasks sum into one dW_p/db_p with GradientAccess::accumulate (STARPU_REDUX).
#pragma once

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/support/codelet_support.h"

namespace starcnn {

// accumulate: add into dw/db instead of overwriting them. col as for conv2d_forward_cpu.
void conv2d_backward_filter_cpu(const Conv2dShape &shape, const float *x, const float *dy,
                                float *dw, float *db, float *col, bool accumulate);
#ifdef STARCNN_USE_CUDA
// cuDNN on the calling CUDA worker (see conv2d_forward_cuda).
void conv2d_backward_filter_cuda(const Conv2dShape &shape, const float *x, const float *dy,
                                 float *dw, float *db, bool accumulate);
#endif

extern starpu_codelet conv2d_backward_filter_codelet;

// With GradientAccess::accumulate, dw and db need set_sum_reduction() (codelets/accumulate.h), and
// the sum includes their previous value unless they were zeroed or invalidated first.
// A sample block: x holds a larger batch, the task works on samples [first_sample, first_sample +
// shape.n) of it and dy holds just those; the blocks' shares of dw and db are summed with
// GradientAccess::accumulate. `col`: a ColScratch of the shape (conv2d_task_support.h) that the
// layer's tasks share; null registers one for this task alone.
void submit_conv2d_backward_filter(starpu_data_handle_t x, starpu_data_handle_t dy,
                                   starpu_data_handle_t dw, starpu_data_handle_t db,
                                   const Conv2dShape &shape,
                                   GradientAccess access = GradientAccess::overwrite,
                                   Where where = Where::any, int priority = 0,
                                   uint32_t first_sample = 0, starpu_data_handle_t col = nullptr);

}  // namespace starcnn
