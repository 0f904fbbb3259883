// Forward convolution of one slice of the filters, bias fused in:
// Y_p [n, c_p, H', W'] = X [n, C_in, H, W] (*) W_p [c_p, C_in, K, K] + b_p [c_p].
// X and Y_p may be sub-handles holding a sub-batch of n samples.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/support/codelet_support.h"

namespace starcnn {

// col: scratch of cpu_col_floats(shape) floats (sample_groups.h; unused for pointwise shapes).
void conv2d_forward_cpu(const Conv2dShape &shape, const float *x, const float *w, const float *b,
                        float *y, float *col);
#ifdef STARCNN_USE_CUDA
// cuDNN on the calling CUDA worker's handle (bound to its StarPU stream) with the algorithm that
// prepare_conv2d(shape) chose. b null: no bias (a fused block adds it in its next kernel), not on
// the GEMM path (use_gemm_conv).
void conv2d_forward_cuda(const Conv2dShape &shape, const float *x, const float *w, const float *b,
                         float *y);
#endif

extern starpu_codelet conv2d_forward_codelet;

// CUDA workers need prepare_conv2d(shape) first. A sample block: x holds a larger batch, of which
// the task convolves samples [first_sample, first_sample + shape.n) into y. `col` as for
// submit_conv2d_backward_filter.
void submit_conv2d_forward(starpu_data_handle_t x, starpu_data_handle_t w, starpu_data_handle_t b,
                           starpu_data_handle_t y, const Conv2dShape &shape,
                           Where where = Where::any, int priority = 0, uint32_t first_sample = 0,
                           starpu_data_handle_t col = nullptr);

}  // namespace starcnn
