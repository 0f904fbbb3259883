#include "codelets/conv2d/direct_conv.h"

#include <algorithm>
#include <cstring>

namespace starcnn {
namespace {

// 16 floats: one AVX-512 register or two AVX2 ones; GCC lowers it for each clone's target, and
// the entry points below are compiled once per target and picked at load time.
using Vec = float __attribute__((vector_size(64)));
constexpr size_t kLanes = 16;
#define STARCNN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// The limits of direct_conv_serves: taps of one output (c_in * k * k), filters, input channels.
constexpr size_t kMaxTaps = 512, kMaxFilters = 32, kMaxInputs = 16;
// Channels per register block: filters in the forward pass (8, or 6 where the filters are a
// multiple of 6 and not of 8: lenet's conv1) and dW, input channels in dX; taps per block in dW.
constexpr size_t kFilterBlock = 8, kGradFilterBlock = 4, kTapBlock = 4, kInputBlock = 4;
// dW sums a group of samples' products in each block before crossing its 16 lanes: lenet's conv1
// and conv2 took 108 and 91 us at batch 8 against im2col's 117 and 108 (op_benchmark on the
// development machine; per sample, conv2's short rows made it 1.3x slower than im2col).
// Samples whose dW products one block sums before crossing its lanes.
constexpr size_t kMaxFilterGradGroup = 64;
// dX gathers over the whole padded input plane, multiplying zeros near its borders: direct only
// while the plane is at most this many times the output (conv1 1.31: 2.4x faster than im2col's
// GEMM and col2im; conv2 1.96: 1.05x slower).
constexpr double kMaxDataGradPlaneRatio = 1.5;

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

// v = n floats from p (16 when n is), the other lanes zero. Vectors go by reference: GCC's ABI
// for passing them by value differs between the clones' targets.
__attribute__((always_inline)) inline void load(Vec &v, const float *p, size_t n = kLanes) {
  v = Vec{};
  std::memcpy(&v, p, n * sizeof(float));
}

__attribute__((always_inline)) inline float sum_lanes(const Vec &v) {
  float s = 0.0f;
  for (size_t l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

// The padded input plane and the output at its width (see direct_conv.h).
struct Plane {
  size_t hp, wp, oh, ow, span, span16;
  explicit Plane(const Conv2dShape &s)
      : hp(size_t(s.h) + 2 * s.pad),
        wp(size_t(s.w) + 2 * s.pad),
        oh(s.out_h()),
        ow(s.out_w()),
        span((oh - 1) * wp + ow),
        span16(round_up(span, kLanes)) {}
  size_t size() const { return hp * wp; }
  // Floats of the zero-padded copy of one input sample (none without padding).
  size_t padded_floats(const Conv2dShape &s) const { return s.pad ? s.c_in * size() : 0; }
  // dY of one channel for the gathering dX pass: `lead` zeros, the channel at full width, zeros.
  size_t lead(const Conv2dShape &s) const { return (s.k - 1) * wp + (s.k - 1); }
  size_t gather_row(const Conv2dShape &s) const {
    return lead(s) + round_up(size(), kLanes) + kLanes;
  }
};

size_t forward_block_size(const Conv2dShape &s) {
  return s.c_out % 6 == 0 && s.c_out % 8 != 0 ? 6 : kFilterBlock;
}
size_t forward_scratch(const Conv2dShape &s, const Plane &g) {
  const size_t block = forward_block_size(s);
  return round_up(s.c_out, block) * s.col_rows() + g.padded_floats(s) + block * g.span16;
}
size_t filter_scratch(const Conv2dShape &s, const Plane &g) {
  return g.padded_floats(s) + round_up(s.c_out, kGradFilterBlock) * g.span16;
}
size_t data_scratch(const Conv2dShape &s, const Plane &g) {
  return round_up(s.c_in, kInputBlock) * s.c_out * s.k * s.k + s.c_out * g.gather_row(s) +
         kInputBlock * round_up(g.size(), kLanes);
}

// One input sample zero-padded into `buffer`, or the sample itself without padding.
const float *padded_input(const Conv2dShape &s, const Plane &g, const float *x, float *buffer) {
  if (s.pad == 0) return x;
  std::fill(buffer, buffer + g.padded_floats(s), 0.0f);
  for (size_t c = 0; c < s.c_in; ++c)
    for (size_t y = 0; y < s.h; ++y)
      std::memcpy(buffer + c * g.size() + (y + s.pad) * g.wp + s.pad, x + (c * s.h + y) * s.w,
                  s.w * sizeof(float));
  return buffer;
}

// dY of one sample at full width (zeros in the thrown-away columns and up to rows of span16).
void widen_output_grad(const Conv2dShape &s, const Plane &g, const float *dy, float *wide,
                       size_t channels, size_t row, size_t offset) {
  std::fill(wide, wide + channels * row, 0.0f);
  for (size_t c = 0; c < s.c_out; ++c)
    for (size_t oy = 0; oy < g.oh; ++oy)
      std::memcpy(wide + c * row + offset + oy * g.wp, dy + (c * g.oh + oy) * g.ow,
                  g.ow * sizeof(float));
}

// Forward: 16 positions of Block filters. wt holds the block's weights tap-major,
// wt[tap * Block + filter]; n < 16 only for the last positions.
template <size_t Block, bool Full>
__attribute__((always_inline)) inline void forward_block(const Conv2dShape &s, const Plane &g,
                                                         const float *xp, const float *wt,
                                                         const float *bias, size_t p0, size_t n,
                                                         Vec *acc) {
  for (size_t c = 0; c < Block; ++c) acc[c] = Vec{} + bias[c];
  for (size_t ci = 0; ci < s.c_in; ++ci)
    for (size_t ky = 0; ky < s.k; ++ky) {
      const float *row = xp + ci * g.size() + ky * g.wp + p0;
      for (size_t kx = 0; kx < s.k; ++kx, wt += Block) {
        Vec xv;
        load(xv, row + kx, Full ? kLanes : n);
        for (size_t c = 0; c < Block; ++c) acc[c] += wt[c] * xv;
      }
    }
}

template <size_t Block>
__attribute__((always_inline)) inline void forward(const Conv2dShape &s, const float *x,
                                                   const float *w, const float *b, float *y,
                                                   float *scratch) {
  const Plane g(s);
  const size_t taps = s.col_rows(), blocks = round_up(s.c_out, Block) / Block;
  // Weights per block of filters, tap-major, and the biases, zero past the last filter.
  float *wt = scratch;
  float *padded = wt + blocks * Block * taps;
  float *out = padded + g.padded_floats(s);
  float bias[kMaxFilters + kFilterBlock] = {};
  std::copy(b, b + s.c_out, bias);
  std::fill(wt, wt + blocks * Block * taps, 0.0f);
  for (size_t f = 0; f < s.c_out; ++f)
    for (size_t t = 0; t < taps; ++t)
      wt[((f / Block) * taps + t) * Block + f % Block] = w[f * taps + t];
  for (size_t i = 0; i < s.n; ++i) {
    const float *xp = padded_input(s, g, x + i * s.x_sample(), padded);
    float *yi = y + i * size_t(s.c_out) * g.oh * g.ow;
    for (size_t blk = 0; blk < blocks; ++blk) {
      const size_t f0 = blk * Block, count = std::min(Block, s.c_out - f0);
      const float *wb = wt + blk * Block * taps;
      Vec acc[Block];
      size_t p0 = 0;
      for (; p0 + kLanes <= g.span; p0 += kLanes) {
        forward_block<Block, true>(s, g, xp, wb, bias + f0, p0, kLanes, acc);
        for (size_t c = 0; c < count; ++c) std::memcpy(out + c * g.span16 + p0, &acc[c], 64);
      }
      if (p0 < g.span) {
        forward_block<Block, false>(s, g, xp, wb, bias + f0, p0, g.span - p0, acc);
        for (size_t c = 0; c < count; ++c)
          std::memcpy(out + c * g.span16 + p0, &acc[c], (g.span - p0) * sizeof(float));
      }
      for (size_t c = 0; c < count; ++c)
        for (size_t oy = 0; oy < g.oh; ++oy)
          std::memcpy(yi + ((f0 + c) * g.oh + oy) * g.ow, out + c * g.span16 + oy * g.wp,
                      g.ow * sizeof(float));
    }
  }
}

// dW: kGradFilterBlock filters times kTapBlock taps, added up over every position of a sample.
__attribute__((always_inline)) inline void filter_block(const Plane &g, const float *xp,
                                                        const float *dyw, const size_t *off,
                                                        Vec (*acc)[kTapBlock]) {
  size_t p0 = 0;
  for (; p0 + kLanes <= g.span; p0 += kLanes) {
    Vec dv[kGradFilterBlock];
    for (size_t c = 0; c < kGradFilterBlock; ++c) load(dv[c], dyw + c * g.span16 + p0);
    for (size_t j = 0; j < kTapBlock; ++j) {
      Vec xv;
      load(xv, xp + off[j] + p0);
      for (size_t c = 0; c < kGradFilterBlock; ++c) acc[c][j] += dv[c] * xv;
    }
  }
  if (p0 < g.span) {  // the input may end before a whole vector: read only what is there
    Vec dv[kGradFilterBlock];
    for (size_t c = 0; c < kGradFilterBlock; ++c) load(dv[c], dyw + c * g.span16 + p0);
    for (size_t j = 0; j < kTapBlock; ++j) {
      Vec xv;
      load(xv, xp + off[j] + p0, g.span - p0);
      for (size_t c = 0; c < kGradFilterBlock; ++c) acc[c][j] += dv[c] * xv;
    }
  }
}

}  // namespace

namespace {

bool direct_conv_shape(const Conv2dShape &s) {
  return s.valid() && s.stride == 1 && s.col_rows() <= kMaxTaps && s.c_out <= kMaxFilters &&
         s.c_in <= kMaxInputs && !s.pointwise();
}

}  // namespace

size_t direct_conv_scratch_floats(const Conv2dShape &s) {
  const Plane g(s);
  return std::max({forward_scratch(s, g), filter_scratch(s, g), data_scratch(s, g)});
}

bool direct_forward_serves(const Conv2dShape &s, size_t scratch_floats) {
  return direct_conv_shape(s) && forward_scratch(s, Plane(s)) <= scratch_floats;
}

bool direct_filter_grad_serves(const Conv2dShape &s, size_t scratch_floats) {
  return direct_conv_shape(s) && filter_scratch(s, Plane(s)) <= scratch_floats;
}

bool direct_data_grad_serves(const Conv2dShape &s, size_t scratch_floats) {
  if (!direct_conv_shape(s)) return false;
  const Plane g(s);
  return double(g.size()) <= kMaxDataGradPlaneRatio * double(g.oh * g.ow) &&
         data_scratch(s, g) <= scratch_floats;
}

STARCNN_VECTOR_CLONES
void direct_conv_forward(const Conv2dShape &s, const float *x, const float *w, const float *b,
                         float *y, float *scratch) {
  if (forward_block_size(s) == 6)
    forward<6>(s, x, w, b, y, scratch);
  else
    forward<kFilterBlock>(s, x, w, b, y, scratch);
}

STARCNN_VECTOR_CLONES
void direct_conv_backward_filter(const Conv2dShape &s, const float *x, const float *dy, float *dw,
                                 float *db, float *scratch, size_t scratch_floats,
                                 bool accumulate) {
  const Plane g(s);
  const size_t taps = s.col_rows(), rows = round_up(s.c_out, kGradFilterBlock);
  // As many samples at a time as the scratch holds: each block's sums cross their 16 lanes once
  // per group, not once per sample.
  const size_t per_sample = filter_scratch(s, g);
  const size_t group = std::clamp<size_t>(scratch_floats / per_sample, 1,
                                          std::min<size_t>(s.n, kMaxFilterGradGroup));
  float *padded = scratch;
  float *dyw = padded + group * g.padded_floats(s);
  if (!accumulate) {
    std::fill(dw, dw + s.w_count(), 0.0f);
    std::fill(db, db + s.c_out, 0.0f);
  }
  // Each tap's offset in the padded sample, and as many copies of the first as a last partial
  // block of taps reads (its sums are dropped).
  size_t off[kMaxTaps + kTapBlock];
  size_t t = 0;
  for (size_t ci = 0; ci < s.c_in; ++ci)
    for (size_t ky = 0; ky < s.k; ++ky)
      for (size_t kx = 0; kx < s.k; ++kx) off[t++] = ci * g.size() + ky * g.wp + kx;
  for (; t < taps + kTapBlock; ++t) off[t] = 0;
  const size_t outputs = size_t(g.oh) * g.ow;
  const float *xp[kMaxFilterGradGroup];
  for (size_t first = 0; first < s.n; first += group) {
    const size_t count_i = std::min(group, s.n - first);
    for (size_t i = 0; i < count_i; ++i) {
      const float *dyi = dy + (first + i) * s.c_out * outputs;
      xp[i] = padded_input(s, g, x + (first + i) * s.x_sample(), padded + i * g.padded_floats(s));
      widen_output_grad(s, g, dyi, dyw + i * rows * g.span16, rows, g.span16, 0);
      for (size_t f = 0; f < s.c_out; ++f) {
        float sum = 0.0f;
        for (size_t o = 0; o < outputs; ++o) sum += dyi[f * outputs + o];
        db[f] += sum;
      }
    }
    for (size_t f0 = 0; f0 < s.c_out; f0 += kGradFilterBlock) {
      const size_t count = std::min(kGradFilterBlock, s.c_out - f0);
      for (size_t t0 = 0; t0 < taps; t0 += kTapBlock) {
        Vec acc[kGradFilterBlock][kTapBlock] = {};
        for (size_t i = 0; i < count_i; ++i)
          filter_block(g, xp[i], dyw + (i * rows + f0) * g.span16, off + t0, acc);
        for (size_t c = 0; c < count; ++c)
          for (size_t j = 0; j < kTapBlock && t0 + j < taps; ++j)
            dw[(f0 + c) * taps + t0 + j] += sum_lanes(acc[c][j]);
      }
    }
  }
}

STARCNN_VECTOR_CLONES
void direct_conv_backward_data(const Conv2dShape &s, const float *w, const float *dy, float *dx,
                               float *scratch, bool accumulate) {
  const Plane g(s);
  const size_t k2 = size_t(s.k) * s.k, taps = s.col_rows();
  const size_t blocks = round_up(s.c_in, kInputBlock) / kInputBlock;
  const size_t row = g.gather_row(s), lead = g.lead(s), plane16 = round_up(g.size(), kLanes);
  // Weights per block of input channels: wt[(filter * k2 + tap) * kInputBlock + channel].
  float *wt = scratch;
  float *dyz = wt + blocks * kInputBlock * s.c_out * k2;
  float *dxp = dyz + s.c_out * row;
  std::fill(wt, dyz, 0.0f);
  for (size_t f = 0; f < s.c_out; ++f)
    for (size_t c = 0; c < s.c_in; ++c)
      for (size_t t = 0; t < k2; ++t)
        wt[(((c / kInputBlock) * s.c_out + f) * k2 + t) * kInputBlock + c % kInputBlock] =
            w[f * taps + c * k2 + t];
  const size_t outputs = size_t(g.oh) * g.ow;
  for (size_t i = 0; i < s.n; ++i) {
    // Input position q gathers dY at q - ky * wp - kx: dY sits `lead` zeros into each row.
    widen_output_grad(s, g, dy + i * s.c_out * outputs, dyz, s.c_out, row, lead);
    float *dxi = dx + i * s.x_sample();
    for (size_t blk = 0; blk < blocks; ++blk) {
      const size_t c0 = blk * kInputBlock, count = std::min(kInputBlock, size_t(s.c_in) - c0);
      const float *wb = wt + blk * kInputBlock * s.c_out * k2;
      for (size_t q0 = 0; q0 < g.size(); q0 += kLanes) {
        Vec acc[kInputBlock] = {};
        const float *wr = wb;
        for (size_t f = 0; f < s.c_out; ++f)
          for (size_t ky = 0; ky < s.k; ++ky) {
            const float *src = dyz + f * row + lead + q0 - ky * g.wp;
            for (size_t kx = 0; kx < s.k; ++kx, wr += kInputBlock) {
              Vec dv;
              load(dv, src - kx);
              for (size_t c = 0; c < kInputBlock; ++c) acc[c] += wr[c] * dv;
            }
          }
        for (size_t c = 0; c < count; ++c) std::memcpy(dxp + c * plane16 + q0, &acc[c], 64);
      }
      // Back to the unpadded input's layout.
      for (size_t c = 0; c < count; ++c)
        for (size_t yy = 0; yy < s.h; ++yy) {
          const float *src = dxp + c * plane16 + (yy + s.pad) * g.wp + s.pad;
          float *dst = dxi + ((c0 + c) * s.h + yy) * s.w;
          if (accumulate)
            for (size_t xx = 0; xx < s.w; ++xx) dst[xx] += src[xx];
          else
            std::memcpy(dst, src, s.w * sizeof(float));
        }
    }
  }
}

}  // namespace starcnn
