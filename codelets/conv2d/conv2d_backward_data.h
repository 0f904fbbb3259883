// Input gradient contribution of one filter slice: dX_p [n, C_in, H, W] = dY_p (*)^T W_p.
// The slices' contributions sum into dX with GradientAccess::accumulate (STARPU_REDUX on a dX
// handle prepared by set_sum_reduction() from codelets/accumulate.h).
#pragma once

#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/support/codelet_support.h"

namespace starcnn {

// accumulate: add into dx instead of overwriting it. col as for conv2d_forward_cpu.
void conv2d_backward_data_cpu(const Conv2dShape &shape, const float *w, const float *dy, float *dx,
                              float *col, bool accumulate);
#ifdef STARCNN_USE_CUDA
// cuDNN on the calling CUDA worker (see conv2d_forward_cuda).
void conv2d_backward_data_cuda(const Conv2dShape &shape, const float *w, const float *dy, float *dx,
                               bool accumulate);
#endif

extern starpu_codelet conv2d_backward_data_codelet;

// With GradientAccess::accumulate, dx needs set_sum_reduction(), and the sum includes its previous
// value unless it was zeroed (submit_zero_fill) or invalidated (starpu_data_invalidate_submit).
// A sample block: dx holds a larger batch, the task works on samples [first_sample, first_sample +
// shape.n) of it and dy holds just those; a block's dx must be accumulated (it writes no other
// sample). `col` as for submit_conv2d_backward_filter.
void submit_conv2d_backward_data(starpu_data_handle_t w, starpu_data_handle_t dy,
                                 starpu_data_handle_t dx, const Conv2dShape &shape,
                                 GradientAccess access = GradientAccess::accumulate,
                                 Where where = Where::any, int priority = 0,
                                 uint32_t first_sample = 0, starpu_data_handle_t col = nullptr);

}  // namespace starcnn
