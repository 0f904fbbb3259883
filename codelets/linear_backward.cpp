#include "codelets/linear_backward.h"

#include "codelets/relu.h"

#include <stdexcept>
#include <string>
#include <vector>

#ifdef STARCNN_USE_CUDA
#include "codelets/support/cuda_op_timer.h"

#include <starpu_cublas_v2.h>
#endif

namespace starcnn {

void linear_backward_cpu(const float *x, const float *w, const float *dy, float *dw, float *db,
                         const float *y, float *dz, float *dx, const LinearShape &shape) {
  const float *g = dy;
  if (y) {
    relu_backward_cpu(y, dy, dz, size_t(shape.n) * shape.out);
    g = dz;
  }
  linear_backward_weights_cpu(x, g, dw, db, shape, false);
  if (dx) linear_backward_data_cpu(w, g, dx, shape);
}

#ifdef STARCNN_USE_CUDA
void linear_backward_cuda(cublasHandle_t cublas, const float *x, const float *w, const float *dy,
                          float *dw, float *db, const float *y, float *dz, float *dx,
                          const LinearShape &shape, cudaStream_t stream) {
  const float *g = dy;
  if (y) {
    TimedPart part("relu backward", stream);
    relu_backward_cuda(y, dy, dz, size_t(shape.n) * shape.out, stream);
    g = dz;
  }
  {
    TimedPart part("weight+bias gradients", stream);
    linear_backward_weights_cuda(cublas, x, g, dw, db, shape, false, stream);
  }
  if (!dx) return;
  TimedPart part("input gradients", stream);
  linear_backward_data_cuda(cublas, w, g, dx, shape);
}
#endif

namespace {

// Which optional buffers follow x, w, dy, dw, db: y and dz (relu), then dx.
struct BackwardArgs {
  LinearShape shape;
  uint32_t relu, input_grad;
};

auto backward_args(void *buffers[], void *cl_arg) {
  BackwardArgs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  size_t next = 5;
  const float *y = nullptr;
  float *dz = nullptr, *dx = nullptr;
  if (a.relu) {
    y = vector_data(buffers[next++]);
    dz = vector_data(buffers[next++]);
  }
  if (a.input_grad) dx = vector_data(buffers[next]);
  return std::make_tuple(static_cast<const float *>(vector_data(buffers[0])),
                         static_cast<const float *>(vector_data(buffers[1])),
                         static_cast<const float *>(vector_data(buffers[2])),
                         vector_data(buffers[3]), vector_data(buffers[4]), y, dz, dx, a.shape);
}

void cpu_backward(void *buffers[], void *cl_arg) {
  std::apply(linear_backward_cpu, backward_args(buffers, cl_arg));
}
#ifdef STARCNN_USE_CUDA
void cuda_backward(void *buffers[], void *cl_arg) {
  std::apply(linear_backward_cuda, std::tuple_cat(std::make_tuple(starpu_cublas_get_local_handle()),
                                                  backward_args(buffers, cl_arg),
                                                  std::make_tuple(starpu_cuda_get_local_stream())));
}
#endif

starpu_perfmodel backward_model = history_model("starcnn_linear_backward");

void check_length(starpu_data_handle_t handle, size_t want, const char *what) {
  check_vector_length(handle, want, "linear_backward", what);
}

}  // namespace

starpu_codelet linear_backward_codelet = make_codelet(
    "linear_backward", cpu_backward, STARCNN_CUDA_FUNC(cuda_backward), &backward_model, {});

void submit_linear_backward(starpu_data_handle_t x, starpu_data_handle_t w, starpu_data_handle_t dy,
                            starpu_data_handle_t dw, starpu_data_handle_t db,
                            starpu_data_handle_t y, starpu_data_handle_t dz,
                            starpu_data_handle_t dx, const LinearShape &shape, Where where,
                            int priority) {
  check_linear_shape(shape, "linear_backward");
  if ((y == nullptr) != (dz == nullptr))
    throw std::invalid_argument("linear_backward: a fused ReLU needs both y and dz");
  const size_t outputs = size_t(shape.n) * shape.out;
  check_length(x, size_t(shape.n) * shape.in, "x");
  check_length(w, size_t(shape.out) * shape.in, "w");
  check_length(dy, outputs, "dy");
  check_length(dw, size_t(shape.out) * shape.in, "dw");
  check_length(db, shape.out, "db");
  std::vector<starpu_data_descr> descrs{
      {x, STARPU_R}, {w, STARPU_R}, {dy, STARPU_R}, {dw, STARPU_W}, {db, STARPU_W}};
  if (y) {
    check_length(y, outputs, "y");
    check_length(dz, outputs, "dz");
    descrs.push_back({y, STARPU_R});
    descrs.push_back({dz, STARPU_W});
  }
  if (dx) {
    check_length(dx, size_t(shape.n) * shape.in, "dx");
    descrs.push_back({dx, STARPU_W});
  }
  const BackwardArgs args{shape, y ? 1u : 0u, dx ? 1u : 0u};
  insert_task(linear_backward_codelet, "linear_backward", where, priority, STARPU_DATA_MODE_ARRAY,
              descrs.data(), int(descrs.size()), STARPU_VALUE, &args, sizeof(args));
}

}  // namespace starcnn
