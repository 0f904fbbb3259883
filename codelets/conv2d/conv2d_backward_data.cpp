#include "codelets/conv2d/conv2d_backward_data.h"

#include <cblas.h>

#include <algorithm>
#include <optional>

#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/conv2d/direct_conv.h"
#include "codelets/conv2d/im2col.h"

namespace starcnn {

void conv2d_backward_data_cpu(const Conv2dShape &s, const float *w, const float *dy, float *dx,
                              float *col, bool accumulate) {
  const size_t rows = s.col_rows(), cols = s.col_cols(), x_sample = size_t(s.c_in) * s.h * s.w;
  if (direct_data_grad_serves(s, rows * cols))
    return direct_conv_backward_data(s, w, dy, dx, col, accumulate);
  if (!accumulate) std::fill(dx, dx + s.n * x_sample, 0.0f);
  for (size_t i = 0; i < s.n; ++i) {
    const float *dyi = dy + i * s.c_out * cols;
    float *dxi = dx + i * x_sample;
    // col [rows, cols] = W^T [rows, c_out] * dY_i [c_out, cols]; pointwise shapes add straight
    // into dX_i, others scatter col back with col2im.
    float *out = s.pointwise() ? dxi : col;
    const float beta = s.pointwise() ? 1.0f : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(rows), int(cols), int(s.c_out), 1.0f,
                w, int(rows), dyi, int(cols), beta, out, int(cols));
    if (!s.pointwise()) col2im_add_cpu(s, col, dxi);
  }
}

namespace {

void conv2d_backward_data_cpu_task(void *buffers[], void *cl_arg) {
  uint32_t first = 0;
  const Conv2dGradientArgs args = unpack_gradient_args(cl_arg, &first);
  conv2d_backward_data_cpu(args.shape, vector_data(buffers[0]), vector_data(buffers[1]),
                           vector_data(buffers[2]) + first * args.shape.x_sample(),
                           vector_data(buffers[3]), args.accumulates());
}

#ifdef STARCNN_USE_CUDA
void conv2d_backward_data_cuda_task(void *buffers[], void *cl_arg) {
  uint32_t first = 0;
  const Conv2dGradientArgs args = unpack_gradient_args(cl_arg, &first);
  conv2d_backward_data_cuda(args.shape, vector_data(buffers[0]), vector_data(buffers[1]),
                            vector_data(buffers[2]) + first * args.shape.x_sample(),
                            args.accumulates());
}
#endif

starpu_perfmodel conv2d_backward_data_model = shape_history_model("starcnn_conv2d_backward_data");

}  // namespace

// Variable buffers: dX's mode (W or REDUX) is chosen per task.
starpu_codelet conv2d_backward_data_codelet = make_codelet(
    "conv2d_backward_data", conv2d_backward_data_cpu_task,
    STARCNN_CUDA_FUNC(conv2d_backward_data_cuda_task), &conv2d_backward_data_model, {});

void submit_conv2d_backward_data(starpu_data_handle_t w, starpu_data_handle_t dy,
                                 starpu_data_handle_t dx, const Conv2dShape &shape,
                                 GradientAccess access, Where where, int priority,
                                 uint32_t first_sample, starpu_data_handle_t col) {
  const Conv2dGradientArgs args{shape, access};
  std::optional<ColScratch> own;
  if (!col) col = own.emplace(shape).handle();
  insert_task(conv2d_backward_data_codelet, "conv2d_backward_data", where, priority, STARPU_R, w,
              STARPU_R, dy, gradient_access_mode(access), dx, STARPU_SCRATCH, col, STARPU_VALUE,
              &args, sizeof(args), STARPU_VALUE, &first_sample, sizeof(first_sample));
}

}  // namespace starcnn
