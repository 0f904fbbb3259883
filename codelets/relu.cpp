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

// In-place tasks have one RW buffer, out-of-place ones an R and a W buffer.
float *last_buffer(void *buffers[], starpu_task *task) {
  return vector_data(buffers[STARPU_TASK_GET_NBUFFERS(task) - 1]);
}

void relu_forward_cpu_task(void *buffers[], void *) {
  relu_forward_cpu(vector_data(buffers[0]), last_buffer(buffers, starpu_task_get_current()),
                   vector_length(buffers[0]));
}

void relu_backward_cpu_task(void *buffers[], void *) {
  relu_backward_cpu(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                    vector_length(buffers[0]));
}

#ifdef STARCNN_USE_CUDA
void relu_forward_cuda_task(void *buffers[], void *) {
  relu_forward_cuda(vector_data(buffers[0]), last_buffer(buffers, starpu_task_get_current()),
                    vector_length(buffers[0]), starpu_cuda_get_local_stream());
}

void relu_backward_cuda_task(void *buffers[], void *) {
  relu_backward_cuda(vector_data(buffers[0]), vector_data(buffers[1]), vector_data(buffers[2]),
                     vector_length(buffers[0]), starpu_cuda_get_local_stream());
}
#endif

starpu_perfmodel relu_forward_model = size_history_model("starcnn_relu_forward");
starpu_perfmodel relu_backward_model = size_history_model("starcnn_relu_backward");

}  // namespace

starpu_codelet relu_forward_codelet =
    make_codelet("relu_forward", relu_forward_cpu_task, STARCNN_CUDA_FUNC(relu_forward_cuda_task),
                 &relu_forward_model, {});
starpu_codelet relu_backward_codelet = make_codelet(
    "relu_backward", relu_backward_cpu_task, STARCNN_CUDA_FUNC(relu_backward_cuda_task),
    &relu_backward_model, {STARPU_R, STARPU_R, STARPU_W});

void submit_relu_forward(starpu_data_handle_t x, starpu_data_handle_t y, Where where,
                         int priority) {
  int ret;
  if (x == y)
    ret = starpu_task_insert(&relu_forward_codelet, STARPU_RW, y, STARPU_EXECUTE_WHERE,
                             where_mask(where), STARPU_PRIORITY, priority, 0);
  else
    ret = starpu_task_insert(&relu_forward_codelet, STARPU_R, x, STARPU_W, y, STARPU_EXECUTE_WHERE,
                             where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "relu_forward");
}

void submit_relu_backward(starpu_data_handle_t y, starpu_data_handle_t dy, starpu_data_handle_t dx,
                          Where where, int priority) {
  const int ret =
      starpu_task_insert(&relu_backward_codelet, STARPU_R, y, STARPU_R, dy, STARPU_W, dx,
                         STARPU_EXECUTE_WHERE, where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "relu_backward");
}

}  // namespace starcnn
