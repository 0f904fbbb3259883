#include "codelets/conv2d/conv2d_backward_filter.h"

#include <cblas.h>

#include <algorithm>
#include <optional>

#include "codelets/conv2d/conv2d_task_support.h"
#include "codelets/conv2d/direct_conv.h"
#include "codelets/conv2d/im2col.h"
#include "codelets/conv2d/sample_groups.h"
#include "codelets/conv2d/winograd_conv.h"

namespace starcnn {
namespace {

// Eight running sums, so the additions pipeline and vectorise (one sum is a chain of dependent
// additions, which the compiler may not reorder).
float sum_of(const float *x, size_t count) {
  float lanes[8] = {};
  size_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[i + size_t(l)];
  float sum = 0.0f;
  for (; i < count; ++i) sum += x[i];
  for (float lane : lanes) sum += lane;
  return sum;
}

}  // namespace

void conv2d_backward_filter_cpu(const Conv2dShape &s, const float *x, const float *dy, float *dw,
                                float *db, float *col, bool accumulate) {
  const size_t rows = s.col_rows(), cols = s.col_cols();
  if (direct_filter_grad_serves(s, rows * cols))
    return direct_conv_backward_filter(s, x, dy, dw, db, col, rows * cols, accumulate);
  if (winograd_filter_grad_serves(s)) return winograd_backward_filter(s, x, dy, dw, db, accumulate);
  if (!accumulate) std::fill(db, db + s.c_out, 0.0f);
  const size_t group = samples_per_gemm(s);
  for (size_t first = 0; first < s.n; first += group) {
    const size_t g = std::min<size_t>(group, s.n - first), ld = g * cols;
    const float *xg = x + first * s.x_sample();
    const float *dyg = dy + first * s.c_out * cols;
    for (size_t j = 0; j < g && !s.pointwise(); ++j)
      im2col_cpu(s, xg + j * s.x_sample(), col + j * cols, ld);
    if (g > 1) {
      gather_samples(dyg, g, s.c_out, cols, col + rows * ld);
      dyg = col + rows * ld;
    }
    // dW [c_out, rows] (+)= dY_g [c_out, g * cols] * col^T [g * cols, rows]
    const float beta = (accumulate || first > 0) ? 1.0f : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(s.c_out), int(rows), int(ld), 1.0f,
                dyg, int(ld), s.pointwise() ? xg : col, int(ld), beta, dw, int(rows));
    for (size_t f = 0; f < s.c_out; ++f) db[f] += sum_of(dyg + f * ld, ld);
  }
}

namespace {

void conv2d_backward_filter_cpu_task(void *buffers[], void *cl_arg) {
  uint32_t first = 0;
  const Conv2dGradientArgs args = unpack_gradient_args(cl_arg, &first);
  conv2d_backward_filter_cpu(args.shape, vector_data(buffers[0]) + first * args.shape.x_sample(),
                             vector_data(buffers[1]), vector_data(buffers[2]),
                             vector_data(buffers[3]), vector_data(buffers[4]), args.accumulates());
}

#ifdef STARCNN_USE_CUDA
void conv2d_backward_filter_cuda_task(void *buffers[], void *cl_arg) {
  uint32_t first = 0;
  const Conv2dGradientArgs args = unpack_gradient_args(cl_arg, &first);
  conv2d_backward_filter_cuda(args.shape, vector_data(buffers[0]) + first * args.shape.x_sample(),
                              vector_data(buffers[1]), vector_data(buffers[2]),
                              vector_data(buffers[3]), args.accumulates());
}
#endif

starpu_perfmodel conv2d_backward_filter_model =
    shape_history_model("starcnn_conv2d_backward_filter");

}  // namespace

// Variable buffers: the gradients' mode (W or REDUX) is chosen per task.
starpu_codelet conv2d_backward_filter_codelet = make_codelet(
    "conv2d_backward_filter", conv2d_backward_filter_cpu_task,
    STARCNN_CUDA_FUNC(conv2d_backward_filter_cuda_task), &conv2d_backward_filter_model, {});

void submit_conv2d_backward_filter(starpu_data_handle_t x, starpu_data_handle_t dy,
                                   starpu_data_handle_t dw, starpu_data_handle_t db,
                                   const Conv2dShape &shape, GradientAccess access, Where where,
                                   int priority, uint32_t first_sample, starpu_data_handle_t col) {
  const Conv2dGradientArgs args{shape, access};
  const starpu_data_access_mode mode = gradient_access_mode(access);
  std::optional<ColScratch> own;
  if (!col) col = own.emplace(shape).handle();
  insert_task(conv2d_backward_filter_codelet, "conv2d_backward_filter", where, priority, STARPU_R,
              x, STARPU_R, dy, mode, dw, mode, db, STARPU_SCRATCH, col, STARPU_VALUE, &args,
              sizeof(args), STARPU_VALUE, &first_sample, sizeof(first_sample));
}

}  // namespace starcnn
