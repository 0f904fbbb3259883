#include "codelets/conv2d/conv2d_backward_data.h"

#include <cblas.h>

#include <algorithm>
#include <optional>

#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/conv2d/direct_conv.h"
#include "codelets/conv2d/im2col.h"
#include "codelets/conv2d/sample_groups.h"
#include "codelets/conv2d/winograd_conv.h"

namespace starcnn {

void conv2d_backward_data_cpu(const Conv2dShape &s, const float *w, const float *dy, float *dx,
                              float *col, bool accumulate) {
  const size_t rows = s.col_rows(), cols = s.col_cols(), x_sample = s.x_sample();
  if (direct_data_grad_serves(s, rows * cols))
    return direct_conv_backward_data(s, w, dy, dx, col, accumulate);
  if (winograd_data_grad_serves(s)) return winograd_backward_data(s, w, dy, dx, accumulate);
  if (!accumulate) std::fill(dx, dx + s.n * x_sample, 0.0f);
  const size_t group = samples_per_gemm(s);
  for (size_t first = 0; first < s.n; first += group) {
    const size_t g = std::min<size_t>(group, s.n - first), ld = g * cols;
    const float *dyg = dy + first * s.c_out * cols;
    float *dxg = dx + first * x_sample;
    if (g > 1) {
      gather_samples(dyg, g, s.c_out, cols, col + rows * ld);
      dyg = col + rows * ld;
    }
    // col [rows, g * cols] = W^T [rows, c_out] * dY_g [c_out, g * cols]; pointwise shapes add
    // straight into dX, others scatter col back with col2im.
    float *out = s.pointwise() ? dxg : col;
    const float beta = s.pointwise() ? 1.0f : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(rows), int(ld), int(s.c_out), 1.0f, w,
                int(rows), dyg, int(ld), beta, out, int(ld));
    for (size_t j = 0; j < g && !s.pointwise(); ++j)
      col2im_add_cpu(s, col + j * cols, dxg + j * x_sample, ld);
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
