#include "codelets/maxpool.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

// Index is uint32_t wherever the tensor allows it: 64-bit division costs the kernels more than
// their memory traffic.
template <typename Index>
__device__ inline void split_index(Index i, uint32_t inner, uint32_t middle, uint32_t &low,
                                   uint32_t &mid, Index &high) {
  low = uint32_t(i % inner);
  mid = uint32_t(i / inner % middle);
  high = i / (Index(inner) * middle);
}

// One thread per output element; the scan order, tie rule and ReLU clamp are those of
// maxpool_forward_cpu. bias (per channel, or null) is added to each input first.
template <typename Index>
__global__ void maxpool_forward_kernel(const float *x, const float *bias, float *p, int32_t *argmax,
                                       MaxpoolShape shape, bool relu) {
  const uint32_t ow_count = shape.out_width(), oh_count = shape.out_height();
  for (size_t o_wide : grid_stride(shape.out_size())) {
    const Index o = Index(o_wide);
    uint32_t ow, oh;
    Index plane;
    split_index(o, ow_count, oh_count, ow, oh, plane);
    const float *xp = x + size_t(plane) * shape.height * shape.width;
    const float b = bias ? bias[plane % shape.channels] : 0.0f;
    const uint32_t corner = 2 * oh * shape.width + 2 * ow;
    const uint32_t window[4] = {corner, corner + 1, corner + shape.width, corner + shape.width + 1};
    uint32_t best = corner;
    float best_value = xp[corner] + b;
    for (uint32_t i : window) {
      const float v = xp[i] + b;
      if (v > best_value || isnan(v)) best = i, best_value = v;
    }
    const bool clamped = relu && !(best_value > 0.0f);
    p[o] = clamped ? 0.0f : best_value;
    argmax[o] = clamped ? -1 : int32_t(best);
  }
}

// One thread per input element: it takes dP if it is its window's argmax, else zero, so dX is
// fully written without atomics.
template <typename Index>
__global__ void maxpool_backward_kernel(const float *dp, const int32_t *argmax, float *dx,
                                        MaxpoolShape shape) {
  const uint32_t ow_count = shape.out_width(), oh_count = shape.out_height();
  for (size_t i_wide : grid_stride(shape.in_size())) {
    const Index i = Index(i_wide);
    uint32_t w, h;
    Index plane;
    split_index(i, shape.width, shape.height, w, h, plane);
    float grad = 0.0f;
    if (h / 2 < oh_count && w / 2 < ow_count) {
      const Index o = (plane * oh_count + h / 2) * ow_count + w / 2;
      if (argmax[o] == int32_t(h * shape.width + w)) grad = dp[o];
    }
    dx[i] = grad;
  }
}

bool fits_32_bits(size_t n) {
  return n <= size_t(UINT32_MAX);
}

void launch_maxpool_forward(const float *x, const float *bias, float *p, int32_t *argmax,
                            const MaxpoolShape &shape, bool relu, cudaStream_t stream) {
  if (shape.out_size() == 0) return;
  const unsigned grid = grid_for(shape.out_size());
  if (fits_32_bits(shape.in_size()))
    maxpool_forward_kernel<uint32_t>
        <<<grid, kThreadsPerBlock, 0, stream>>>(x, bias, p, argmax, shape, relu);
  else
    maxpool_forward_kernel<size_t>
        <<<grid, kThreadsPerBlock, 0, stream>>>(x, bias, p, argmax, shape, relu);
  check_launch(relu ? "relu_maxpool_forward" : "maxpool_forward");
}

}  // namespace

void maxpool_forward_cuda(const float *x, float *p, int32_t *argmax, const MaxpoolShape &shape,
                          bool relu, cudaStream_t stream) {
  launch_maxpool_forward(x, nullptr, p, argmax, shape, relu, stream);
}

void bias_relu_maxpool_forward_cuda(const float *x, const float *bias, float *p, int32_t *argmax,
                                    const MaxpoolShape &shape, cudaStream_t stream) {
  launch_maxpool_forward(x, bias, p, argmax, shape, true, stream);
}

void maxpool_backward_cuda(const float *dp, const int32_t *argmax, float *dx,
                           const MaxpoolShape &shape, cudaStream_t stream) {
  if (shape.in_size() == 0) return;
  const unsigned grid = grid_for(shape.in_size());
  if (fits_32_bits(shape.in_size()))
    maxpool_backward_kernel<uint32_t><<<grid, kThreadsPerBlock, 0, stream>>>(dp, argmax, dx, shape);
  else
    maxpool_backward_kernel<size_t><<<grid, kThreadsPerBlock, 0, stream>>>(dp, argmax, dx, shape);
  check_launch("maxpool_backward");
}

}  // namespace starcnn
