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

// The kernels' arguments: (x, n) and (dst, src, n).
auto zero_fill_args(void *buffers[], void *) {
  return std::make_tuple(vector_data(buffers[0]), vector_length(buffers[0]));
}
auto add_into_args(void *buffers[], void *) {
  return std::make_tuple(vector_data(buffers[0]), vector_data(buffers[1]),
                         vector_length(buffers[0]));
}

starpu_perfmodel zero_fill_model = size_history_model("starcnn_zero_fill");
starpu_perfmodel add_into_model = size_history_model("starcnn_add_into");

}  // namespace

starpu_codelet zero_fill_codelet = STARCNN_KERNEL_CODELET(
    "zero_fill", zero_fill_cpu, zero_fill_cuda, zero_fill_args, &zero_fill_model, {STARPU_W});
starpu_codelet add_into_codelet = STARCNN_KERNEL_CODELET(
    "add_into", add_into_cpu, add_into_cuda, add_into_args, &add_into_model, {STARPU_RW, STARPU_R});

void set_sum_reduction(starpu_data_handle_t handle) {
  starpu_data_set_reduction_methods(handle, &add_into_codelet, &zero_fill_codelet);
}

void submit_zero_fill(starpu_data_handle_t x, Where where, int priority) {
  insert_task(zero_fill_codelet, "zero_fill", where, priority, STARPU_W, x);
}

void submit_add_into(starpu_data_handle_t dst, starpu_data_handle_t src, Where where,
                     int priority) {
  insert_task(add_into_codelet, "add_into", where, priority, STARPU_RW, dst, STARPU_R, src);
}

}  // namespace starcnn
