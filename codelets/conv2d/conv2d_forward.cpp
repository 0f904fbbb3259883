#include "codelets/conv2d/conv2d_forward.h"

#include <cblas.h>

#include <algorithm>
#include <optional>

#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/conv2d/direct_conv.h"
#include "codelets/conv2d/im2col.h"
#include "codelets/conv2d/sample_groups.h"
#include "codelets/conv2d/winograd_conv.h"

namespace starcnn {

void conv2d_forward_cpu(const Conv2dShape &s, const float *x, const float *w, const float *b,
                        float *y, float *col) {
  const size_t rows = s.col_rows(), cols = s.col_cols();
  if (direct_forward_serves(s, rows * cols)) return direct_conv_forward(s, x, w, b, y, col);
  if (winograd_forward_serves(s)) return winograd_forward(s, x, w, b, y);
  const size_t group = samples_per_gemm(s);
  for (size_t first = 0; first < s.n; first += group) {
    const size_t g = std::min<size_t>(group, s.n - first), ld = g * cols;
    const float *xg = x + first * s.x_sample();
    float *yg = y + first * s.c_out * cols;
    for (size_t j = 0; j < g && !s.pointwise(); ++j)
      im2col_cpu(s, xg + j * s.x_sample(), col + j * cols, ld);
    // Y_g [c_out, g * cols] = W [c_out, rows] * col [rows, g * cols]; one sample's lands in Y.
    float *out = g == 1 ? yg : col + rows * ld;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.c_out), int(ld), int(rows), 1.0f,
                w, int(rows), s.pointwise() ? xg : col, int(ld), 0.0f, out, int(ld));
    scatter_samples(out, g, s.c_out, cols, b, yg);
  }
}

namespace {

void conv2d_forward_cpu_task(void *buffers[], void *cl_arg) {
  Conv2dShape shape;
  uint32_t first = 0;
  starpu_codelet_unpack_args(cl_arg, &shape, &first);
  conv2d_forward_cpu(shape, vector_data(buffers[0]) + first * shape.x_sample(),
                     vector_data(buffers[1]), vector_data(buffers[2]), vector_data(buffers[3]),
                     vector_data(buffers[4]));
}

#ifdef STARCNN_USE_CUDA
void conv2d_forward_cuda_task(void *buffers[], void *cl_arg) {
  Conv2dShape shape;
  uint32_t first = 0;
  starpu_codelet_unpack_args(cl_arg, &shape, &first);
  conv2d_forward_cuda(shape, vector_data(buffers[0]) + first * shape.x_sample(),
                      vector_data(buffers[1]), vector_data(buffers[2]), vector_data(buffers[3]));
}
#endif

starpu_perfmodel conv2d_forward_model = shape_history_model("starcnn_conv2d_forward");

}  // namespace

starpu_codelet conv2d_forward_codelet = make_codelet(
    "conv2d_forward", conv2d_forward_cpu_task, STARCNN_CUDA_FUNC(conv2d_forward_cuda_task),
    &conv2d_forward_model, {STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH});

void submit_conv2d_forward(starpu_data_handle_t x, starpu_data_handle_t w, starpu_data_handle_t b,
                           starpu_data_handle_t y, const Conv2dShape &shape, Where where,
                           int priority, uint32_t first_sample, starpu_data_handle_t col) {
  std::optional<ColScratch> own;
  if (!col) col = own.emplace(shape).handle();
  insert_task(conv2d_forward_codelet, "conv2d_forward", where, priority, STARPU_R, x, STARPU_R, w,
              STARPU_R, b, STARPU_W, y, STARPU_SCRATCH, col, STARPU_VALUE, &shape, sizeof(shape),
              STARPU_VALUE, &first_sample, sizeof(first_sample));
}

}  // namespace starcnn
