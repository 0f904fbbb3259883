#include "codelets/conv2d/conv_block.h"

#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/relu.h"

#ifdef STARCNN_USE_CUDA
#include "codelets/conv2d/conv_gemm.h"
#include "codelets/support/cuda_op_timer.h"
#endif

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

MaxpoolShape conv_block_pool(const Conv2dShape &s) {
  return MaxpoolShape{s.n, s.c_out, s.out_h(), s.out_w()};
}

void conv_block_forward_cpu(const Conv2dShape &s, const float *x, const float *w, const float *b,
                            float *y, float *p, int32_t *argmax, float *col) {
  conv2d_forward_cpu(s, x, w, b, y, col);
  if (p)
    maxpool_forward_cpu(y, p, argmax, conv_block_pool(s), true);
  else
    relu_forward_cpu(y, y, s.y_count());
}

void conv_block_backward_cpu(const Conv2dShape &s, const float *x, const float *w,
                             const float *dout, const float *y, const int32_t *argmax, float *dz,
                             float *dw, float *db, float *dx, float *col) {
  if (argmax)
    maxpool_backward_cpu(dout, argmax, dz, conv_block_pool(s));
  else
    relu_backward_cpu(y, dout, dz, s.y_count());
  conv2d_backward_filter_cpu(s, x, dz, dw, db, col, false);
  if (dx) conv2d_backward_data_cpu(s, w, dz, dx, col, false);
}

#ifdef STARCNN_USE_CUDA
namespace {

// Whether the convolution's bias is added in the ReLU's (or pool's) kernel instead of a pass of its
// own over Y; STARCNN_FUSED_BIAS=0 keeps cuDNN's add (to compare). The GEMM path adds it in its
// GEMM already.
bool fuse_bias(const Conv2dShape &s) {
  static const bool enabled = [] {
    const char *value = std::getenv("STARCNN_FUSED_BIAS");
    return value == nullptr || std::string(value) != "0";
  }();
  return enabled && !use_gemm_conv(s);
}

}  // namespace

void conv_block_forward_cuda(const Conv2dShape &s, const float *x, const float *w, const float *b,
                             float *y, float *p, int32_t *argmax, cudaStream_t stream) {
  const bool fused = fuse_bias(s);
  conv2d_forward_cuda(s, x, w, fused ? nullptr : b, y);
  if (p) {
    TimedPart part(fused ? "bias+relu+pool" : "relu+pool", stream);
    if (fused)
      bias_relu_maxpool_forward_cuda(y, b, p, argmax, conv_block_pool(s), stream);
    else
      maxpool_forward_cuda(y, p, argmax, conv_block_pool(s), true, stream);
  } else if (fused) {
    TimedPart part("bias+relu", stream);
    bias_relu_forward_cuda(y, b, s.c_out, s.out_h() * s.out_w(), s.y_count(), stream);
  } else {
    TimedPart part("relu", stream);
    relu_forward_cuda(y, y, s.y_count(), stream);
  }
}

void conv_block_backward_cuda(const Conv2dShape &s, const float *x, const float *w,
                              const float *dout, const float *y, const int32_t *argmax, float *dz,
                              float *dw, float *db, float *dx, cudaStream_t stream) {
  {
    TimedPart part(argmax ? "pool+relu backward" : "relu backward", stream);
    if (argmax)
      maxpool_backward_cuda(dout, argmax, dz, conv_block_pool(s), stream);
    else
      relu_backward_cuda(y, dout, dz, s.y_count(), stream);
  }
  conv2d_backward_filter_cuda(s, x, dz, dw, db, false);
  if (!dx) return;
  TimedPart part("data gradients", stream);
  conv2d_backward_data_cuda(s, w, dz, dx, false);
}
#endif

namespace {

// Which optional buffers a task has: p and argmax (forward with a pool), dx (backward).
struct BlockArgs {
  Conv2dShape shape;
  uint32_t pool, input_grad;
};

BlockArgs unpack(void *cl_arg) {
  BlockArgs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  return a;
}

// Forward buffers: x, w, b, y, [p, argmax], col.
auto forward_args(void *buffers[], void *cl_arg) {
  const BlockArgs a = unpack(cl_arg);
  float *p = a.pool ? vector_data(buffers[4]) : nullptr;
  int32_t *argmax = a.pool ? int32_vector_data(buffers[5]) : nullptr;
  return std::make_tuple(a.shape, static_cast<const float *>(vector_data(buffers[0])),
                         static_cast<const float *>(vector_data(buffers[1])),
                         static_cast<const float *>(vector_data(buffers[2])),
                         vector_data(buffers[3]), p, argmax, a.pool ? 6 : 4);
}

// Backward buffers: x, w, dout, mask, dz, dw, db, [dx], col.
auto backward_args(void *buffers[], void *cl_arg) {
  const BlockArgs a = unpack(cl_arg);
  const float *y = a.pool ? nullptr : vector_data(buffers[3]);
  const int32_t *argmax = a.pool ? int32_vector_data(buffers[3]) : nullptr;
  float *dx = a.input_grad ? vector_data(buffers[7]) : nullptr;
  return std::make_tuple(a.shape, static_cast<const float *>(vector_data(buffers[0])),
                         static_cast<const float *>(vector_data(buffers[1])),
                         static_cast<const float *>(vector_data(buffers[2])), y, argmax,
                         vector_data(buffers[4]), vector_data(buffers[5]), vector_data(buffers[6]),
                         dx, a.input_grad ? 8 : 7);
}

void forward_cpu_task(void *buffers[], void *cl_arg) {
  const auto [s, x, w, b, y, p, argmax, col] = forward_args(buffers, cl_arg);
  conv_block_forward_cpu(s, x, w, b, y, p, argmax, vector_data(buffers[col]));
}
void backward_cpu_task(void *buffers[], void *cl_arg) {
  const auto [s, x, w, dout, y, argmax, dz, dw, db, dx, col] = backward_args(buffers, cl_arg);
  conv_block_backward_cpu(s, x, w, dout, y, argmax, dz, dw, db, dx, vector_data(buffers[col]));
}
#ifdef STARCNN_USE_CUDA
void forward_cuda_task(void *buffers[], void *cl_arg) {
  const auto [s, x, w, b, y, p, argmax, col] = forward_args(buffers, cl_arg);
  (void)col;
  conv_block_forward_cuda(s, x, w, b, y, p, argmax, starpu_cuda_get_local_stream());
}
void backward_cuda_task(void *buffers[], void *cl_arg) {
  const auto [s, x, w, dout, y, argmax, dz, dw, db, dx, col] = backward_args(buffers, cl_arg);
  (void)col;
  conv_block_backward_cuda(s, x, w, dout, y, argmax, dz, dw, db, dx,
                           starpu_cuda_get_local_stream());
}
#endif

// Keyed on the shape and the flags (the first packed argument).
starpu_perfmodel forward_model = shape_history_model("starcnn_conv_block_forward");
starpu_perfmodel backward_model = shape_history_model("starcnn_conv_block_backward");

void check_length(starpu_data_handle_t handle, size_t want, const char *what) {
  check_vector_length(handle, want, "conv_block", what);
}

void check_shape(const Conv2dShape &s) {
  if (!s.valid()) throw std::invalid_argument("conv_block: bad convolution shape");
}

}  // namespace

starpu_codelet conv_block_forward_codelet =
    make_codelet("conv_block_forward", forward_cpu_task, STARCNN_CUDA_FUNC(forward_cuda_task),
                 &forward_model, {});
starpu_codelet conv_block_backward_codelet =
    make_codelet("conv_block_backward", backward_cpu_task, STARCNN_CUDA_FUNC(backward_cuda_task),
                 &backward_model, {});

void submit_conv_block_forward(starpu_data_handle_t x, starpu_data_handle_t w,
                               starpu_data_handle_t b, starpu_data_handle_t y,
                               starpu_data_handle_t p, starpu_data_handle_t argmax,
                               starpu_data_handle_t col, const Conv2dShape &shape, Where where,
                               int priority) {
  check_shape(shape);
  if ((p == nullptr) != (argmax == nullptr))
    throw std::invalid_argument("conv_block: a pool needs both its output and its argmax");
  check_length(x, shape.x_count(), "x");
  check_length(w, shape.w_count(), "w");
  check_length(b, shape.b_count(), "b");
  check_length(y, shape.y_count(), "y");
  std::vector<starpu_data_descr> descrs{{x, STARPU_R}, {w, STARPU_R}, {b, STARPU_R}, {y, STARPU_W}};
  if (p) {
    const size_t pooled = conv_block_pool(shape).out_size();
    check_length(p, pooled, "p");
    check_length(argmax, pooled, "argmax");
    descrs.push_back({p, STARPU_W});
    descrs.push_back({argmax, STARPU_W});
  }
  descrs.push_back({col, STARPU_SCRATCH});
  const BlockArgs args{shape, p ? 1u : 0u, 0u};
  insert_task(conv_block_forward_codelet, "conv_block_forward", where, priority,
              STARPU_DATA_MODE_ARRAY, descrs.data(), int(descrs.size()), STARPU_VALUE, &args,
              sizeof(args));
}

void submit_conv_block_backward(starpu_data_handle_t x, starpu_data_handle_t w,
                                starpu_data_handle_t dout, starpu_data_handle_t mask, bool pool,
                                starpu_data_handle_t dz, starpu_data_handle_t dw,
                                starpu_data_handle_t db, starpu_data_handle_t dx,
                                starpu_data_handle_t col, const Conv2dShape &shape, Where where,
                                int priority) {
  check_shape(shape);
  const size_t out = pool ? conv_block_pool(shape).out_size() : shape.y_count();
  check_length(x, shape.x_count(), "x");
  check_length(w, shape.w_count(), "w");
  check_length(dout, out, "dout");
  check_length(mask, out, pool ? "argmax" : "y");
  check_length(dz, shape.y_count(), "dz");
  check_length(dw, shape.w_count(), "dw");
  check_length(db, shape.b_count(), "db");
  std::vector<starpu_data_descr> descrs{{x, STARPU_R},    {w, STARPU_R},  {dout, STARPU_R},
                                        {mask, STARPU_R}, {dz, STARPU_W}, {dw, STARPU_W},
                                        {db, STARPU_W}};
  if (dx) {
    check_length(dx, shape.x_count(), "dx");
    descrs.push_back({dx, STARPU_W});
  }
  descrs.push_back({col, STARPU_SCRATCH});
  const BlockArgs args{shape, pool ? 1u : 0u, dx ? 1u : 0u};
  insert_task(conv_block_backward_codelet, "conv_block_backward", where, priority,
              STARPU_DATA_MODE_ARRAY, descrs.data(), int(descrs.size()), STARPU_VALUE, &args,
              sizeof(args));
}

}  // namespace starcnn
