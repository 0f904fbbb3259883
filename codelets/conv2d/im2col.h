// Lowering of one sample for convolution as matrix products (CPU only, knows nothing of StarPU).
// col has shape.col_rows() rows (c, ky, kx) and shape.col_cols() columns (oy, ox), row-major, its
// rows ld floats apart (0: col_cols(), packed; more: several samples' matrices side by side).
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

namespace starcnn {

// col[(c,ky,kx), (oy,ox)] = x[c, oy*stride - pad + ky, ox*stride - pad + kx], zero outside x.
void im2col_cpu(const Conv2dShape &shape, const float *x, float *col, size_t ld = 0);

// The adjoint of im2col: dx[c, iy, ix] += every col entry that im2col read from there.
void col2im_add_cpu(const Conv2dShape &shape, const float *col, float *dx, size_t ld = 0);

}  // namespace starcnn
