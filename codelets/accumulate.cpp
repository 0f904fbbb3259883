#include "codelets/accumulate.h"

#include <cstring>

namespace starcnn {

void zero_fill_cpu(float *x, size_t n) {
  std::memset(x, 0, n * sizeof(float));
}

void add_into_cpu(float *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] += src[i];
}

namespace {

void zero_fill_cpu_task(void *buffers[], void *) {
  zero_fill_cpu(vector_data(buffers[0]), vector_length(buffers[0]));
}

void add_into_cpu_task(void *buffers[], void *) {
  add_into_cpu(vector_data(buffers[0]), vector_data(buffers[1]), vector_length(buffers[0]));
}

#ifdef STARCNN_USE_CUDA
void zero_fill_cuda_task(void *buffers[], void *) {
  zero_fill_cuda(vector_data(buffers[0]), vector_length(buffers[0]),
                 starpu_cuda_get_local_stream());
}

void add_into_cuda_task(void *buffers[], void *) {
  add_into_cuda(vector_data(buffers[0]), vector_data(buffers[1]), vector_length(buffers[0]),
                starpu_cuda_get_local_stream());
}
#endif

starpu_perfmodel zero_fill_model = size_history_model("starcnn_zero_fill");
starpu_perfmodel add_into_model = size_history_model("starcnn_add_into");

}  // namespace

starpu_codelet zero_fill_codelet =
    make_codelet("zero_fill", zero_fill_cpu_task, STARCNN_CUDA_FUNC(zero_fill_cuda_task),
                 &zero_fill_model, {STARPU_W});
starpu_codelet add_into_codelet =
    make_codelet("add_into", add_into_cpu_task, STARCNN_CUDA_FUNC(add_into_cuda_task),
                 &add_into_model, {STARPU_RW, STARPU_R});

void set_sum_reduction(starpu_data_handle_t handle) {
  starpu_data_set_reduction_methods(handle, &add_into_codelet, &zero_fill_codelet);
}

void submit_zero_fill(starpu_data_handle_t x, Where where, int priority) {
  const int ret = starpu_task_insert(&zero_fill_codelet, STARPU_W, x, STARPU_EXECUTE_WHERE,
                                     where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "zero_fill");
}

void submit_add_into(starpu_data_handle_t dst, starpu_data_handle_t src, Where where,
                     int priority) {
  const int ret =
      starpu_task_insert(&add_into_codelet, STARPU_RW, dst, STARPU_R, src, STARPU_EXECUTE_WHERE,
                         where_mask(where), STARPU_PRIORITY, priority, 0);
  check_submit(ret, "add_into");
}

}  // namespace starcnn
