#include "codelets/conv2d/winograd_conv.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace starcnn {
namespace {

constexpr size_t kPoints = 16;  // the points of a transformed 4x4 tile, one GEMM each
// Floats of one block's transformed tiles, before and after its GEMMs together (4 MB): a block
// stays in the core's caches from its input transform to its output transform.
constexpr size_t kBlockFloats = size_t(1) << 20;
// The 16 matrices of a transform lie this many floats more than their size apart: at a multiple of
// 4 KB the 16 rows a tile's transform writes or reads at once would share the same cache sets.
constexpr size_t kSkew = 16;

size_t point_stride(size_t rows, size_t cols) {
  return rows * cols + kSkew;
}

bool winograd_enabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("STARCNN_WINOGRAD");
    return value == nullptr || std::string(value) != "0";
  }();
  return enabled;
}

// A convolution as the kernels see it: n samples of `in` channels of h x w through `out` 3x3
// filters of stride 1 and padding `pad`. Its output is split into 2x2 tiles, numbered sample by
// sample, row by row; the last row and column of tiles may stick out of an odd output.
struct Problem {
  size_t n, in, h, w, out, pad;
  size_t oh() const { return h + 2 * pad - 2; }
  size_t ow() const { return w + 2 * pad - 2; }
  size_t tiles_y() const { return (oh() + 1) / 2; }
  size_t tiles_x() const { return (ow() + 1) / 2; }
  size_t tiles() const { return n * tiles_y() * tiles_x(); }
};

bool serves(const Conv2dShape &s) {
  return winograd_enabled() && s.valid() && s.k == 3 && s.stride == 1 && s.pad <= 2 &&
         s.c_in >= kMinWinogradChannels && s.c_out >= kMinWinogradChannels;
}

// u[point][o][i] = G g G^T for the filter g from input channel i to output channel o: w[o][i], or
// with Flip w[i][o] turned by 180 degrees (the data gradient's filters).
template <bool Flip>
void transform_filters(const float *w, size_t out, size_t in, float *u) {
  const size_t stride = point_stride(out, in);  // from one point's matrix to the next
  for (size_t o = 0; o < out; ++o)
    for (size_t i = 0; i < in; ++i) {
      const float *src = Flip ? w + (i * out + o) * 9 : w + (o * in + i) * 9;
      float g[9];
      for (size_t e = 0; e < 9; ++e) g[e] = Flip ? src[8 - e] : src[e];
      float gg[4][3];  // G g
      for (size_t c = 0; c < 3; ++c) {
        gg[0][c] = g[c];
        gg[1][c] = 0.5f * (g[c] + g[3 + c] + g[6 + c]);
        gg[2][c] = 0.5f * (g[c] - g[3 + c] + g[6 + c]);
        gg[3][c] = g[6 + c];
      }
      float *dst = u + o * in + i;
      for (size_t r = 0; r < 4; ++r) {
        dst[(r * 4 + 0) * stride] = gg[r][0];
        dst[(r * 4 + 1) * stride] = 0.5f * (gg[r][0] + gg[r][1] + gg[r][2]);
        dst[(r * 4 + 2) * stride] = 0.5f * (gg[r][0] - gg[r][1] + gg[r][2]);
        dst[(r * 4 + 3) * stride] = gg[r][2];
      }
    }
}

// mm[r][q] = the transformed tile's point (r, q), its 16 points `stride` floats apart.
__attribute__((always_inline)) inline void gather_points(const float *src, size_t stride,
                                                         float (&mm)[4][4]) {
  for (size_t r = 0; r < 4; ++r)
    for (size_t q = 0; q < 4; ++q) mm[r][q] = src[(r * 4 + q) * stride];
}

// Where tile t of the output starts: its sample and the top-left corner of its 4x4 input tile
// (which may lie in the padding).
struct TileOrigin {
  size_t sample;
  long y, x;
};

TileOrigin tile_origin(const Problem &p, size_t t) {
  const size_t per_sample = p.tiles_y() * p.tiles_x(), in_sample = t % per_sample;
  return {t / per_sample, long(2 * (in_sample / p.tiles_x())) - long(p.pad),
          long(2 * (in_sample % p.tiles_x())) - long(p.pad)};
}

// v[point][c][j] = B^T d B for the 4x4 input tile d of channel c of the block's tile j (tile
// origins in `at`). Channel by channel, so that each point's matrix is written row by row.
void transform_inputs(const Problem &p, const float *x, const std::vector<TileOrigin> &at,
                      float *v) {
  const long h = long(p.h), w = long(p.w);
  const size_t tb = at.size(), stride = point_stride(p.in, tb);
  for (size_t c = 0; c < p.in; ++c)
    for (size_t j = 0; j < tb; ++j) {
      const float *plane = x + (at[j].sample * p.in + c) * p.h * p.w;
      const bool inside = at[j].y >= 0 && at[j].x >= 0 && at[j].y + 4 <= h && at[j].x + 4 <= w;
      float d[4][4];
      if (inside) {
        const float *corner = plane + at[j].y * w + at[j].x;
        for (long r = 0; r < 4; ++r)
          for (long q = 0; q < 4; ++q) d[r][q] = corner[r * w + q];
      } else {
        for (long r = 0; r < 4; ++r)
          for (long q = 0; q < 4; ++q) {
            const long yy = at[j].y + r, xx = at[j].x + q;
            d[r][q] = yy >= 0 && yy < h && xx >= 0 && xx < w ? plane[yy * w + xx] : 0.0f;
          }
      }
      float bd[4][4];  // B^T d
      for (size_t q = 0; q < 4; ++q) {
        bd[0][q] = d[0][q] - d[2][q];
        bd[1][q] = d[1][q] + d[2][q];
        bd[2][q] = d[2][q] - d[1][q];
        bd[3][q] = d[1][q] - d[3][q];
      }
      float *dst = v + c * tb + j;
      for (size_t r = 0; r < 4; ++r) {
        dst[(r * 4 + 0) * stride] = bd[r][0] - bd[r][2];
        dst[(r * 4 + 1) * stride] = bd[r][1] + bd[r][2];
        dst[(r * 4 + 2) * stride] = bd[r][2] - bd[r][1];
        dst[(r * 4 + 3) * stride] = bd[r][1] - bd[r][3];
      }
    }
}

// The 2x2 output tile A^T m A of every output channel o and the block's tile j, plus bias[o]
// (null: none), written into y or added to it; the parts outside an odd output are dropped.
void transform_outputs(const Problem &p, const float *m, const std::vector<TileOrigin> &at,
                       const float *bias, float *y, bool accumulate) {
  const size_t oh = p.oh(), ow = p.ow(), tb = at.size(), stride = point_stride(p.out, tb);
  for (size_t o = 0; o < p.out; ++o) {
    const float add = bias ? bias[o] : 0.0f;
    for (size_t j = 0; j < tb; ++j) {
      const size_t oy = size_t(at[j].y + long(p.pad)), ox = size_t(at[j].x + long(p.pad));
      const size_t rows = std::min<size_t>(2, oh - oy), cols = std::min<size_t>(2, ow - ox);
      const float *src = m + o * tb + j;
      float mm[4][4];
      gather_points(src, stride, mm);
      float am[2][4];  // A^T m
      for (size_t q = 0; q < 4; ++q) {
        am[0][q] = mm[0][q] + mm[1][q] + mm[2][q];
        am[1][q] = mm[1][q] - mm[2][q] - mm[3][q];
      }
      float *plane = y + (at[j].sample * p.out + o) * oh * ow;
      for (size_t a = 0; a < rows; ++a) {
        const float tile[2] = {am[a][0] + am[a][1] + am[a][2] + add,
                               am[a][1] - am[a][2] - am[a][3] + add};
        float *row = plane + (oy + a) * ow + ox;
        for (size_t b = 0; b < cols; ++b) row[b] = accumulate ? row[b] + tile[b] : tile[b];
      }
    }
  }
}

// Tiles per block: a block's transformed tiles, in and out, within kBlockFloats.
size_t tiles_per_block(const Problem &p) {
  return std::min(p.tiles(), std::max<size_t>(16, kBlockFloats / (kPoints * (p.in + p.out))));
}

void tile_origins(const Problem &p, size_t first, size_t count, std::vector<TileOrigin> &at) {
  at.resize(count);
  for (size_t j = 0; j < count; ++j) at[j] = tile_origin(p, first + j);
}

void run(const Problem &p, const float *x, const float *w, bool flip, const float *bias, float *y,
         bool accumulate) {
  // The calling worker's buffers, kept from task to task.
  thread_local std::vector<float> u, v, m;
  thread_local std::vector<TileOrigin> at;
  u.resize(kPoints * point_stride(p.out, p.in));
  if (flip)
    transform_filters<true>(w, p.out, p.in, u.data());
  else
    transform_filters<false>(w, p.out, p.in, u.data());
  const size_t total = p.tiles(), block = tiles_per_block(p);
  v.resize(kPoints * point_stride(p.in, block));
  m.resize(kPoints * point_stride(p.out, block));
  for (size_t t0 = 0; t0 < total; t0 += block) {
    tile_origins(p, t0, std::min(block, total - t0), at);
    const size_t tb = at.size();
    transform_inputs(p, x, at, v.data());
    // m[point] [out, tb] = u[point] [out, in] * v[point] [in, tb]
    for (size_t point = 0; point < kPoints; ++point)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(p.out), int(tb), int(p.in), 1.0f,
                  u.data() + point * point_stride(p.out, p.in), int(p.in),
                  v.data() + point * point_stride(p.in, tb), int(tb), 0.0f,
                  m.data() + point * point_stride(p.out, tb), int(tb));
    transform_outputs(p, m.data(), at, bias, y, accumulate);
  }
}

// The weight gradient by F(3x3, 2x2): each 2x2 tile of dY against the 4x4 tile of X it met,
// dw[o][i] = A^T (sum over tiles of (G dy G^T) . (B^T x B)) A with A^T = [1 1 1 0; 0 1 -1 0;
// 0 1 1 1], G = [1 0; .5 .5; .5 -.5; 0 1] and B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 -1 0 1]. That
// B^T is the forward's with its last row negated: transform_inputs serves, and G's last row is
// negated here instead.

// e[point][o][j] = G' g G'^T for the 2x2 tile g of dY channel o at the block's tile j (zero where
// it sticks out of an odd output), G' being G with its last row negated.
void transform_output_grads(const Problem &p, const float *dy, const std::vector<TileOrigin> &at,
                            float *e) {
  const size_t oh = p.oh(), ow = p.ow(), tb = at.size(), stride = point_stride(p.out, tb);
  for (size_t o = 0; o < p.out; ++o)
    for (size_t j = 0; j < tb; ++j) {
      const size_t oy = size_t(at[j].y + long(p.pad)), ox = size_t(at[j].x + long(p.pad));
      const float *plane = dy + (at[j].sample * p.out + o) * oh * ow;
      float g[2][2] = {};
      for (size_t a = 0; a < 2 && oy + a < oh; ++a)
        for (size_t b = 0; b < 2 && ox + b < ow; ++b) g[a][b] = plane[(oy + a) * ow + ox + b];
      float gg[4][2];  // G' g
      for (size_t b = 0; b < 2; ++b) {
        gg[0][b] = g[0][b];
        gg[1][b] = 0.5f * (g[0][b] + g[1][b]);
        gg[2][b] = 0.5f * (g[0][b] - g[1][b]);
        gg[3][b] = -g[1][b];
      }
      float *dst = e + o * tb + j;
      for (size_t r = 0; r < 4; ++r) {
        dst[(r * 4 + 0) * stride] = gg[r][0];
        dst[(r * 4 + 1) * stride] = 0.5f * (gg[r][0] + gg[r][1]);
        dst[(r * 4 + 2) * stride] = 0.5f * (gg[r][0] - gg[r][1]);
        dst[(r * 4 + 3) * stride] = -gg[r][1];
      }
    }
}

// dw[o][i] (+)= A^T m A for the summed products m[point][o][i].
void transform_filter_grads(const Problem &p, const float *m, float *dw, bool accumulate) {
  const size_t stride = point_stride(p.out, p.in);
  for (size_t o = 0; o < p.out; ++o)
    for (size_t i = 0; i < p.in; ++i) {
      const float *src = m + o * p.in + i;
      float mm[4][4];
      gather_points(src, stride, mm);
      float am[3][4];  // A^T m
      for (size_t q = 0; q < 4; ++q) {
        am[0][q] = mm[0][q] + mm[1][q] + mm[2][q];
        am[1][q] = mm[1][q] - mm[2][q];
        am[2][q] = mm[1][q] + mm[2][q] + mm[3][q];
      }
      float *out = dw + (o * p.in + i) * 9;
      for (size_t r = 0; r < 3; ++r) {
        const float row[3] = {am[r][0] + am[r][1] + am[r][2], am[r][1] - am[r][2],
                              am[r][1] + am[r][2] + am[r][3]};
        for (size_t k = 0; k < 3; ++k)
          out[r * 3 + k] = accumulate ? out[r * 3 + k] + row[k] : row[k];
      }
    }
}

void filter_grad(const Problem &p, const float *x, const float *dy, float *dw, bool accumulate) {
  thread_local std::vector<float> v, e, m;
  thread_local std::vector<TileOrigin> at;
  const size_t total = p.tiles(), block = tiles_per_block(p);
  v.resize(kPoints * point_stride(p.in, block));
  e.resize(kPoints * point_stride(p.out, block));
  m.resize(kPoints * point_stride(p.out, p.in));
  for (size_t t0 = 0; t0 < total; t0 += block) {
    tile_origins(p, t0, std::min(block, total - t0), at);
    const size_t tb = at.size();
    transform_inputs(p, x, at, v.data());
    transform_output_grads(p, dy, at, e.data());
    // m[point] [out, in] (+)= e[point] [out, tb] * v[point]^T [tb, in]
    for (size_t point = 0; point < kPoints; ++point)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(p.out), int(p.in), int(tb), 1.0f,
                  e.data() + point * point_stride(p.out, tb), int(tb),
                  v.data() + point * point_stride(p.in, tb), int(tb), t0 == 0 ? 0.0f : 1.0f,
                  m.data() + point * point_stride(p.out, p.in), int(p.in));
  }
  transform_filter_grads(p, m.data(), dw, accumulate);
}

}  // namespace

bool winograd_forward_serves(const Conv2dShape &s) {
  return serves(s);
}

bool winograd_data_grad_serves(const Conv2dShape &s) {
  return serves(s);
}

bool winograd_filter_grad_serves(const Conv2dShape &s) {
  return serves(s);
}

void winograd_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                      float *y) {
  run({s.n, s.c_in, s.h, s.w, s.c_out, s.pad}, x, w, false, b, y, false);
}

void winograd_backward_data(const Conv2dShape &s, const float *w, const float *dy, float *dx,
                            bool accumulate) {
  // dX = dY (*) W turned and transposed, padded by 2 - pad: its output is h x w again.
  run({s.n, s.c_out, s.out_h(), s.out_w(), s.c_in, 2 - size_t(s.pad)}, dy, w, true, nullptr, dx,
      accumulate);
}

void winograd_backward_filter(const Conv2dShape &s, const float *x, const float *dy, float *dw,
                              float *db, bool accumulate) {
  const Problem p{s.n, s.c_in, s.h, s.w, s.c_out, s.pad};
  filter_grad(p, x, dy, dw, accumulate);
  const size_t plane = p.oh() * p.ow();
  if (!accumulate) std::fill(db, db + s.c_out, 0.0f);
  for (size_t i = 0; i < s.n; ++i)
    for (size_t o = 0; o < s.c_out; ++o) {
      const float *g = dy + (i * s.c_out + o) * plane;
      float sum = 0.0f;
      for (size_t k = 0; k < plane; ++k) sum += g[k];
      db[o] += sum;
    }
}

}  // namespace starcnn
