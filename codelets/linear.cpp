#include "codelets/linear.h"

#include <cblas.h>

#include <stdexcept>
#include <string>

#ifdef STARCNN_USE_CUDA
#include <starpu_cublas_v2.h>
#endif

namespace starcnn {

// The gemms below are row-major products of the matrices named in linear.h.

void linear_forward_cpu(const float *x, const float *w, const float *b, float *y,
                        const LinearShape &s, bool relu) {
  const int n = int(s.n), in = int(s.in), out = int(s.out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, x, in, w, in, 0.0f, y,
              out);
  for (size_t i = 0; i < s.n; ++i) {
    float *row = y + i * s.out;
    for (size_t j = 0; j < s.out; ++j) {
      const float v = row[j] + b[j];
      row[j] = relu && v < 0.0f ? 0.0f : v;
    }
  }
}

void linear_backward_data_cpu(const float *w, const float *dy, float *dx, const LinearShape &s) {
  const int n = int(s.n), in = int(s.in), out = int(s.out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, out, 1.0f, dy, out, w, in, 0.0f, dx,
              in);
}

void linear_backward_weights_cpu(const float *x, const float *dy, float *dw, float *db,
                                 const LinearShape &s, bool accumulate) {
  const int n = int(s.n), in = int(s.in), out = int(s.out);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, n, 1.0f, dy, out, x, in,
              accumulate ? 1.0f : 0.0f, dw, in);
  if (!accumulate)
    for (size_t j = 0; j < s.out; ++j) db[j] = 0.0f;
  for (size_t i = 0; i < s.n; ++i)
    for (size_t j = 0; j < s.out; ++j) db[j] += dy[i * s.out + j];
}

void check_linear_shape(const LinearShape &s, const char *op) {
  if (s.n == 0 || s.in == 0 || s.out == 0)
    throw std::invalid_argument(std::string(op) +
                                ": every dimension of the shape must be positive");
}

namespace {

struct ForwardArgs {
  LinearShape shape;
  uint32_t relu;
};

struct WeightsArgs {
  LinearShape shape;
  GradientAccess access;
};

template <typename Args>
Args unpack(void *cl_arg) {
  Args args;
  starpu_codelet_unpack_args(cl_arg, &args);
  return args;
}

// The kernels' arguments, as linear.h lists them (without the cuBLAS handle and stream).
auto forward_args(void *buffers[], void *cl_arg) {
  const auto a = unpack<ForwardArgs>(cl_arg);
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                         vector_data(buffers[3]), a.shape, a.relu != 0);
}
auto backward_data_args(void *buffers[], void *cl_arg) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                         unpack<LinearShape>(cl_arg));
}
auto backward_weights_args(void *buffers[], void *cl_arg) {
  const auto a = unpack<WeightsArgs>(cl_arg);
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                         vector_data(buffers[3]), a.shape, a.access == GradientAccess::accumulate);
}

#ifdef STARCNN_USE_CUDA
// The CUDA launchers take the worker's cuBLAS handle (StarPU's, bound to its stream) first, and
// the stream last where they launch a kernel of their own (kStream).
template <auto kernel, auto gather, bool kStream = true>
void cublas_task(void *buffers[], void *cl_arg) {
  const auto args =
      std::tuple_cat(std::make_tuple(starpu_cublas_get_local_handle()), gather(buffers, cl_arg));
  if constexpr (kStream)
    std::apply(kernel, std::tuple_cat(args, std::make_tuple(starpu_cuda_get_local_stream())));
  else
    std::apply(kernel, args);
}
#endif

starpu_perfmodel forward_model = history_model("starcnn_linear_forward");
starpu_perfmodel backward_data_model = history_model("starcnn_linear_backward_data");
starpu_perfmodel backward_weights_model = history_model("starcnn_linear_backward_weights");

void check_length(starpu_data_handle_t handle, size_t want, const char *what) {
  check_vector_length(handle, want, "linear", what);
}

}  // namespace

starpu_codelet linear_forward_codelet =
    make_codelet("linear_forward", cpu_task<linear_forward_cpu, forward_args>,
                 STARCNN_CUDA_FUNC((cublas_task<linear_forward_cuda, forward_args>)),
                 &forward_model, {STARPU_R, STARPU_R, STARPU_R, STARPU_W});
starpu_codelet linear_backward_data_codelet = make_codelet(
    "linear_backward_data", cpu_task<linear_backward_data_cpu, backward_data_args>,
    STARCNN_CUDA_FUNC((cublas_task<linear_backward_data_cuda, backward_data_args, false>)),
    &backward_data_model, {STARPU_R, STARPU_R, STARPU_W});
// Modes of dW and db come with each task: W or REDUX.
starpu_codelet linear_backward_weights_codelet = make_codelet(
    "linear_backward_weights", cpu_task<linear_backward_weights_cpu, backward_weights_args>,
    STARCNN_CUDA_FUNC((cublas_task<linear_backward_weights_cuda, backward_weights_args>)),
    &backward_weights_model, {});

void submit_linear_forward(starpu_data_handle_t x, starpu_data_handle_t w, starpu_data_handle_t b,
                           starpu_data_handle_t y, const LinearShape &shape, bool relu, Where where,
                           int priority) {
  check_linear_shape(shape, "linear");
  check_length(x, size_t(shape.n) * shape.in, "x");
  check_length(w, size_t(shape.out) * shape.in, "w");
  check_length(b, shape.out, "b");
  check_length(y, size_t(shape.n) * shape.out, "y");
  ForwardArgs args{shape, relu ? 1u : 0u};
  insert_task(linear_forward_codelet, "linear_forward", where, priority, STARPU_R, x, STARPU_R, w,
              STARPU_R, b, STARPU_W, y, STARPU_VALUE, &args, sizeof(args));
}

void submit_linear_backward_data(starpu_data_handle_t w, starpu_data_handle_t dy,
                                 starpu_data_handle_t dx, const LinearShape &shape, Where where,
                                 int priority) {
  check_linear_shape(shape, "linear");
  check_length(w, size_t(shape.out) * shape.in, "w");
  check_length(dy, size_t(shape.n) * shape.out, "dy");
  check_length(dx, size_t(shape.n) * shape.in, "dx");
  LinearShape args = shape;
  insert_task(linear_backward_data_codelet, "linear_backward_data", where, priority, STARPU_R, w,
              STARPU_R, dy, STARPU_W, dx, STARPU_VALUE, &args, sizeof(args));
}

void submit_linear_backward_weights(starpu_data_handle_t x, starpu_data_handle_t dy,
                                    starpu_data_handle_t dw, starpu_data_handle_t db,
                                    const LinearShape &shape, GradientAccess access, Where where,
                                    int priority) {
  check_linear_shape(shape, "linear");
  check_length(x, size_t(shape.n) * shape.in, "x");
  check_length(dy, size_t(shape.n) * shape.out, "dy");
  check_length(dw, size_t(shape.out) * shape.in, "dw");
  check_length(db, shape.out, "db");
  // Under REDUX each task writes into a zeroed private copy, so it accumulates.
  const WeightsArgs args{shape, access};
  const starpu_data_access_mode out_mode = gradient_access_mode(access);
  insert_task(linear_backward_weights_codelet, "linear_backward_weights", where, priority, STARPU_R,
              x, STARPU_R, dy, out_mode, dw, out_mode, db, STARPU_VALUE, &args, sizeof(args));
}

}  // namespace starcnn
