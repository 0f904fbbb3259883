#include "codelets/maxpool.h"
#include "codelets/support/cuda_support.h"

namespace starcnn {
namespace {

// One thread per output element; the scan order, tie rule and ReLU clamp are those of
// maxpool_forward_cpu.
__global__ void maxpool_forward_kernel(const float *x, float *p, int32_t *argmax,
                                       MaxpoolShape shape, bool relu) {
  const uint32_t ow_count = shape.out_width(), oh_count = shape.out_height();
  const size_t total = shape.out_size();
  for (size_t o : grid_stride(total)) {
    const uint32_t ow = uint32_t(o % ow_count);
    const uint32_t oh = uint32_t(o / ow_count % oh_count);
    const size_t plane = o / (size_t(ow_count) * oh_count);
    const float *xp = x + plane * shape.height * shape.width;
    const uint32_t corner = 2 * oh * shape.width + 2 * ow;
    const uint32_t window[4] = {corner, corner + 1, corner + shape.width, corner + shape.width + 1};
    uint32_t best = corner;
    for (uint32_t i : window)
      if (xp[i] > xp[best] || isnan(xp[i])) best = i;
    const bool clamped = relu && !(xp[best] > 0.0f);
    p[o] = clamped ? 0.0f : xp[best];
    argmax[o] = clamped ? -1 : int32_t(best);
  }
}

// One thread per input element: it takes dP if it is its window's argmax, else zero, so dX is
// fully written without atomics.
__global__ void maxpool_backward_kernel(const float *dp, const int32_t *argmax, float *dx,
                                        MaxpoolShape shape) {
  const uint32_t ow_count = shape.out_width(), oh_count = shape.out_height();
  const size_t total = shape.in_size();
  for (size_t i : grid_stride(total)) {
    const uint32_t w = uint32_t(i % shape.width);
    const uint32_t h = uint32_t(i / shape.width % shape.height);
    const size_t plane = i / (size_t(shape.width) * shape.height);
    float grad = 0.0f;
    if (h / 2 < oh_count && w / 2 < ow_count) {
      const size_t o = (plane * oh_count + h / 2) * ow_count + w / 2;
      if (argmax[o] == int32_t(h * shape.width + w)) grad = dp[o];
    }
    dx[i] = grad;
  }
}

}  // namespace

void maxpool_forward_cuda(const float *x, float *p, int32_t *argmax, const MaxpoolShape &shape,
                          bool relu, cudaStream_t stream) {
  if (shape.out_size() == 0) return;
  maxpool_forward_kernel<<<grid_for(shape.out_size()), kThreadsPerBlock, 0, stream>>>(x, p, argmax,
                                                                                      shape, relu);
  check_launch(relu ? "relu_maxpool_forward" : "maxpool_forward");
}

void maxpool_backward_cuda(const float *dp, const int32_t *argmax, float *dx,
                           const MaxpoolShape &shape, cudaStream_t stream) {
  if (shape.in_size() == 0) return;
  maxpool_backward_kernel<<<grid_for(shape.in_size()), kThreadsPerBlock, 0, stream>>>(dp, argmax,
                                                                                      dx, shape);
  check_launch("maxpool_backward");
}

}  // namespace starcnn
