#include "codelets/maxpool.h"

namespace starcnn {

namespace {

// One output row of 2x2 windows. Branch-free (selects, no jumps on the data): on random data a
// branch per comparison mispredicts and costs several times the arithmetic. Scan order top-left,
// top-right, bottom-left, bottom-right; a later value wins when larger or NaN (as PyTorch).
template <bool kRelu>
void maxpool_row(const float *top, const float *bottom, int32_t corner, int32_t width,
                 uint32_t out_width, float *p, int32_t *argmax) {
  for (uint32_t ow = 0; ow < out_width; ++ow) {
    const float v[4] = {top[2 * ow], top[2 * ow + 1], bottom[2 * ow], bottom[2 * ow + 1]};
    const int32_t at = corner + 2 * int32_t(ow);
    const int32_t index[4] = {at, at + 1, at + width, at + width + 1};
    float best = v[0];
    int32_t best_index = index[0];
    for (int k = 1; k < 4; ++k) {
      const bool take = v[k] > best || v[k] != v[k];
      best = take ? v[k] : best;
      best_index = take ? index[k] : best_index;
    }
    const bool clamped = kRelu && !(best > 0.0f);
    p[ow] = clamped ? 0.0f : best;
    argmax[ow] = clamped ? -1 : best_index;
  }
}

template <bool kRelu>
void maxpool_forward(const float *x, float *p, int32_t *argmax, const MaxpoolShape &shape) {
  const size_t in_plane = size_t(shape.height) * shape.width;
  const uint32_t out_h = shape.out_height(), out_w = shape.out_width();
  const int32_t width = int32_t(shape.width);
  for (size_t plane = 0; plane < shape.planes(); ++plane) {
    const float *xp = x + plane * in_plane;
    const size_t out = plane * out_h * out_w;
    for (uint32_t oh = 0; oh < out_h; ++oh) {
      const int32_t corner = 2 * int32_t(oh) * width;
      maxpool_row<kRelu>(xp + corner, xp + corner + width, corner, width, out_w,
                         p + out + oh * out_w, argmax + out + oh * out_w);
    }
  }
}

}  // namespace

void maxpool_forward_cpu(const float *x, float *p, int32_t *argmax, const MaxpoolShape &shape,
                         bool relu) {
  if (relu)
    maxpool_forward<true>(x, p, argmax, shape);
  else
    maxpool_forward<false>(x, p, argmax, shape);
}

void maxpool_backward_cpu(const float *dp, const int32_t *argmax, float *dx,
                          const MaxpoolShape &shape) {
  const size_t in_plane = size_t(shape.height) * shape.width;
  const size_t out_plane = size_t(shape.out_height()) * shape.out_width();
  for (size_t i = 0; i < shape.in_size(); ++i) dx[i] = 0.0f;
  // Windows do not overlap, so each dP lands on its own element.
  for (size_t plane = 0; plane < shape.planes(); ++plane)
    for (size_t o = plane * out_plane; o < (plane + 1) * out_plane; ++o)
      if (argmax[o] >= 0) dx[plane * in_plane + size_t(argmax[o])] = dp[o];
}

namespace {

// Reads the shape and checks it against the buffers: the input-sized one (X or dX), the
// output-sized one (P or dP) and the argmax.
MaxpoolShape unpack_shape(void *cl_arg, void *input, void *output, void *argmax) {
  MaxpoolShape shape;
  starpu_codelet_unpack_args(cl_arg, &shape);
  STARPU_ASSERT(vector_length(input) == shape.in_size());
  STARPU_ASSERT(vector_length(output) == shape.out_size());
  STARPU_ASSERT(vector_length(argmax) == shape.out_size());
  return shape;
}

// The kernels' arguments: (x, p, argmax, shape, relu) forward, (dp, argmax, dx, shape) backward.
template <bool kRelu>
auto forward_args(void *buffers[], void *cl_arg) {
  const MaxpoolShape shape = unpack_shape(cl_arg, buffers[0], buffers[1], buffers[2]);
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]),
                         int32_vector_data(buffers[2]), shape, kRelu);
}
auto backward_args(void *buffers[], void *cl_arg) {
  const MaxpoolShape shape = unpack_shape(cl_arg, buffers[2], buffers[0], buffers[1]);
  return std::make_tuple(vector_data(buffers[0]), int32_vector_data(buffers[1]),
                         vector_data(buffers[2]), shape);
}

starpu_perfmodel maxpool_forward_model = history_model("starcnn_maxpool_forward");
starpu_perfmodel relu_maxpool_forward_model = history_model("starcnn_relu_maxpool_forward");
starpu_perfmodel maxpool_backward_model = history_model("starcnn_maxpool_backward");

}  // namespace

starpu_codelet maxpool_forward_codelet = STARCNN_KERNEL_CODELET(
    "maxpool_forward", maxpool_forward_cpu, maxpool_forward_cuda, forward_args<false>,
    &maxpool_forward_model, {STARPU_R, STARPU_W, STARPU_W});
starpu_codelet relu_maxpool_forward_codelet = STARCNN_KERNEL_CODELET(
    "relu_maxpool_forward", maxpool_forward_cpu, maxpool_forward_cuda, forward_args<true>,
    &relu_maxpool_forward_model, {STARPU_R, STARPU_W, STARPU_W});
starpu_codelet maxpool_backward_codelet =
    STARCNN_KERNEL_CODELET("maxpool_backward", maxpool_backward_cpu, maxpool_backward_cuda,
                           backward_args, &maxpool_backward_model, {STARPU_R, STARPU_R, STARPU_W});

void submit_maxpool_forward(starpu_data_handle_t x, starpu_data_handle_t p,
                            starpu_data_handle_t argmax, const MaxpoolShape &shape, Where where,
                            int priority) {
  insert_task(maxpool_forward_codelet, "maxpool_forward", where, priority, STARPU_R, x, STARPU_W, p,
              STARPU_W, argmax, STARPU_VALUE, &shape, sizeof(shape));
}

void submit_relu_maxpool_forward(starpu_data_handle_t x, starpu_data_handle_t p,
                                 starpu_data_handle_t argmax, const MaxpoolShape &shape,
                                 Where where, int priority) {
  insert_task(relu_maxpool_forward_codelet, "relu_maxpool_forward", where, priority, STARPU_R, x,
              STARPU_W, p, STARPU_W, argmax, STARPU_VALUE, &shape, sizeof(shape));
}

void submit_maxpool_backward(starpu_data_handle_t dp, starpu_data_handle_t argmax,
                             starpu_data_handle_t dx, const MaxpoolShape &shape, Where where,
                             int priority) {
  insert_task(maxpool_backward_codelet, "maxpool_backward", where, priority, STARPU_R, dp, STARPU_R,
              argmax, STARPU_W, dx, STARPU_VALUE, &shape, sizeof(shape));
}

}  // namespace starcnn
