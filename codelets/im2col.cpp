#include "codelets/im2col.h"

#include <algorithm>

namespace starcnn {
namespace {

// Visits every (row of col, input position) pair of one sample; `at` gets the col index and the
// x index, or -1 for padding.
template <typename Visit>
void for_each_col_entry(const Conv2dShape &s, Visit at) {
  const long oh = s.out_h(), ow = s.out_w(), h = s.h, w = s.w;
  size_t i = 0;
  for (long c = 0; c < long(s.c_in); ++c)
    for (long ky = 0; ky < long(s.k); ++ky)
      for (long kx = 0; kx < long(s.k); ++kx)
        for (long oy = 0; oy < oh; ++oy) {
          const long iy = oy * long(s.stride) - long(s.pad) + ky;
          for (long ox = 0; ox < ow; ++ox, ++i) {
            const long ix = ox * long(s.stride) - long(s.pad) + kx;
            const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            at(i, inside ? (c * h + iy) * w + ix : -1L);
          }
        }
}

}  // namespace

void im2col_cpu(const Conv2dShape &shape, const float *x, float *col) {
  for_each_col_entry(shape, [&](size_t i, long xi) { col[i] = xi < 0 ? 0.0f : x[xi]; });
}

void col2im_add_cpu(const Conv2dShape &shape, const float *col, float *dx) {
  for_each_col_entry(shape, [&](size_t i, long xi) {
    if (xi >= 0) dx[xi] += col[i];
  });
}

}  // namespace starcnn
