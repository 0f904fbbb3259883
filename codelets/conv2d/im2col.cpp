#include "codelets/conv2d/im2col.h"

#include <algorithm>

namespace starcnn {
namespace {

// The output columns [lo, hi) of a kernel column kx whose input column lies inside x; the others
// read padding. ox is inside when 0 <= ox * stride - pad + kx < w. It is the same for every
// output row, so it is computed once per (c, ky, kx).
struct InsideColumns {
  long first = 0;  // input column of output column 0 (may lie outside x)
  long lo = 0, hi = 0;
};

InsideColumns inside_columns(const Conv2dShape &s, long kx) {
  const long stride = long(s.stride), w = long(s.w), ow = long(s.out_w());
  InsideColumns cols;
  cols.first = kx - long(s.pad);
  cols.lo = cols.first >= 0 ? 0 : std::min(ow, (-cols.first + stride - 1) / stride);
  cols.hi = cols.first >= w ? 0 : std::min(ow, (w - 1 - cols.first) / stride + 1);
  cols.hi = std::max(cols.hi, cols.lo);
  return cols;
}

// Calls visit(inside, x_row, cols, col_index) for every output row of every (c, ky, kx) row of
// col, in col's order; x_row is the index in x that the row's output column 0 reads (it may lie
// before the row when padded), and inside is false when the whole input row is padding. col's
// rows lie ld floats apart.
template <typename Visit>
void for_each_col_row(const Conv2dShape &s, size_t ld, Visit visit) {
  const long oh = long(s.out_h()), ow = long(s.out_w()), k = long(s.k), h = long(s.h);
  const long stride = long(s.stride), pad = long(s.pad), w = long(s.w);
  size_t row = 0;
  for (long c = 0; c < long(s.c_in); ++c)
    for (long ky = 0; ky < k; ++ky)
      for (long kx = 0; kx < k; ++kx, ++row) {
        const InsideColumns cols = inside_columns(s, kx);
        size_t i = row * ld;
        for (long oy = 0; oy < oh; ++oy, i += size_t(ow)) {
          const long iy = oy * stride - pad + ky;
          visit(iy >= 0 && iy < h, (c * h + iy) * w + cols.first, cols, i);
        }
      }
}

}  // namespace

void im2col_cpu(const Conv2dShape &shape, const float *x, float *col, size_t ld) {
  const long ow = long(shape.out_w()), stride = long(shape.stride);
  for_each_col_row(shape, ld ? ld : shape.col_cols(),
                   [=](bool inside, long x_row, const InsideColumns &cols, size_t at) {
                     float *__restrict out = col + at;
                     if (!inside) {
                       std::fill(out, out + ow, 0.0f);
                       return;
                     }
                     const float *__restrict in = x + x_row;
                     std::fill(out, out + cols.lo, 0.0f);
                     if (stride == 1)
                       for (long ox = cols.lo; ox < cols.hi; ++ox) out[ox] = in[ox];
                     else
                       for (long ox = cols.lo; ox < cols.hi; ++ox) out[ox] = in[ox * stride];
                     std::fill(out + cols.hi, out + ow, 0.0f);
                   });
}

void col2im_add_cpu(const Conv2dShape &shape, const float *col, float *dx, size_t ld) {
  const long stride = long(shape.stride);
  for_each_col_row(shape, ld ? ld : shape.col_cols(),
                   [=](bool inside, long x_row, const InsideColumns &cols, size_t at) {
                     if (!inside) return;
                     const float *__restrict in = col + at;
                     float *__restrict out = dx + x_row;
                     for (long ox = cols.lo; ox < cols.hi; ++ox) out[ox * stride] += in[ox];
                   });
}

}  // namespace starcnn
