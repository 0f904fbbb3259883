#include "codelets/relu.h"

namespace starcnn {

void relu_forward_cpu(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward_cpu(const float *y, const float *dy, float *dx, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = dy[i];  // read unconditionally: the loop then vectorises instead of branching
    dx[i] = y[i] > 0.0f ? g : 0.0f;
  }
}

namespace {

// The kernels' arguments: x, y, n (in place, x and y are the one buffer).
auto relu_forward_args(void *buffers[], void *) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]),
                         vector_length(buffers[0]));
}
auto relu_forward_inplace_args(void *buffers[], void *) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[0]),
                         vector_length(buffers[0]));
}
auto relu_backward_args(void *buffers[], void *) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                         vector_length(buffers[0]));
}

// In place and out of place share one model: their footprints differ in buffer count.
starpu_perfmodel relu_forward_model = size_history_model("starcnn_relu_forward");
starpu_perfmodel relu_backward_model = size_history_model("starcnn_relu_backward");

}  // namespace

starpu_codelet relu_forward_codelet =
    STARCNN_KERNEL_CODELET("relu_forward", relu_forward_cpu, relu_forward_cuda, relu_forward_args,
                           &relu_forward_model, {STARPU_R, STARPU_W});
starpu_codelet relu_forward_inplace_codelet =
    STARCNN_KERNEL_CODELET("relu_forward_inplace", relu_forward_cpu, relu_forward_cuda,
                           relu_forward_inplace_args, &relu_forward_model, {STARPU_RW});
starpu_codelet relu_backward_codelet = STARCNN_KERNEL_CODELET(
    "relu_backward", relu_backward_cpu, relu_backward_cuda, relu_backward_args,
    &relu_backward_model, {STARPU_R, STARPU_R, STARPU_W});

void submit_relu_forward(starpu_data_handle_t x, starpu_data_handle_t y, Where where,
                         int priority) {
  if (x == y)
    insert_task(relu_forward_inplace_codelet, "relu_forward", where, priority, STARPU_RW, y);
  else
    insert_task(relu_forward_codelet, "relu_forward", where, priority, STARPU_R, x, STARPU_W, y);
}

void submit_relu_backward(starpu_data_handle_t y, starpu_data_handle_t dy, starpu_data_handle_t dx,
                          Where where, int priority) {
  insert_task(relu_backward_codelet, "relu_backward", where, priority, STARPU_R, y, STARPU_R, dy,
              STARPU_W, dx);
}

}  // namespace starcnn
