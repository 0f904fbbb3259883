#include "codelets/linear_reduction.h"

#include <algorithm>

namespace starcnn {

void linear_gradient_zero_cpu(float *x, size_t n) {
  std::fill(x, x + n, 0.0f);
}

void linear_gradient_add_cpu(float *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] += src[i];
}

namespace {

// StarPU also calls the zero function directly, outside any task, to start a private copy:
// it must use nothing but its buffer.
void zero_cpu_task(void *buffers[], void *) {
  linear_gradient_zero_cpu(vector_data(buffers[0]), vector_length(buffers[0]));
}

void add_cpu_task(void *buffers[], void *) {
  linear_gradient_add_cpu(vector_data(buffers[0]), vector_data(buffers[1]),
                          vector_length(buffers[0]));
}

#ifdef STARCNN_USE_CUDA
void zero_cuda_task(void *buffers[], void *) {
  linear_gradient_zero_cuda(vector_data(buffers[0]), vector_length(buffers[0]),
                            starpu_cuda_get_local_stream());
}

void add_cuda_task(void *buffers[], void *) {
  linear_gradient_add_cuda(vector_data(buffers[0]), vector_data(buffers[1]),
                           vector_length(buffers[0]), starpu_cuda_get_local_stream());
}
#endif

starpu_perfmodel zero_model = size_history_model("starcnn_linear_gradient_zero");
starpu_perfmodel add_model = size_history_model("starcnn_linear_gradient_add");

}  // namespace

starpu_codelet linear_gradient_zero_codelet =
    make_codelet("linear_gradient_zero", zero_cpu_task, STARCNN_CUDA_FUNC(zero_cuda_task),
                 &zero_model, {STARPU_W});
starpu_codelet linear_gradient_add_codelet =
    make_codelet("linear_gradient_add", add_cpu_task, STARCNN_CUDA_FUNC(add_cuda_task), &add_model,
                 {STARPU_RW, STARPU_R});

void enable_linear_gradient_reduction(starpu_data_handle_t gradient) {
  starpu_data_set_reduction_methods(gradient, &linear_gradient_add_codelet,
                                    &linear_gradient_zero_codelet);
}

void submit_linear_gradient_zero(starpu_data_handle_t gradient, Where where, int priority) {
  const int ret =
      starpu_task_insert(&linear_gradient_zero_codelet, STARPU_W, gradient, STARPU_EXECUTE_WHERE,
                         where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "linear_gradient_zero");
}

}  // namespace starcnn
