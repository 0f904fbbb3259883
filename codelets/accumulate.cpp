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

namespace {

// The same codelet runnable on one kind of worker only.
starpu_codelet only_on(starpu_codelet codelet, Where kind) {
  codelet.where = uint32_t(where_mask(kind));
  return codelet;
}

starpu_codelet zero_fill_on_cpu = only_on(zero_fill_codelet, Where::cpu);
starpu_codelet add_into_on_cpu = only_on(add_into_codelet, Where::cpu);
starpu_codelet zero_fill_on_cuda = only_on(zero_fill_codelet, Where::cuda);
starpu_codelet add_into_on_cuda = only_on(add_into_codelet, Where::cuda);

}  // namespace

void set_sum_reduction(starpu_data_handle_t handle, Where where) {
  // StarPU submits the reduction's tasks itself: without a kind given, the scheduler may run a
  // CPU-side sum on the GPU and drag every private copy across the bus.
  // Kept to CUDA only with one CUDA worker: with several, StarPU may sum the copies on another GPU
  // than the one holding them (staged through RAM), and its simulation of 2 and 4 H200s stalled.
  Where kind = kind_of(where);
  if (kind == Where::cuda && starpu_cuda_worker_get_count() > 1) kind = Where::any;
  if (kind == Where::cpu)
    starpu_data_set_reduction_methods(handle, &add_into_on_cpu, &zero_fill_on_cpu);
  else if (kind == Where::cuda)
    starpu_data_set_reduction_methods(handle, &add_into_on_cuda, &zero_fill_on_cuda);
  else
    starpu_data_set_reduction_methods(handle, &add_into_codelet, &zero_fill_codelet);
}

std::vector<starpu_codelet *> sum_reduction_codelets() {
  return {&zero_fill_codelet, &add_into_codelet,  &zero_fill_on_cpu,
          &add_into_on_cpu,   &zero_fill_on_cuda, &add_into_on_cuda};
}

std::vector<starpu_codelet *> sum_reduction_task_codelets() {
  return {&add_into_codelet, &add_into_on_cpu, &add_into_on_cuda};
}

void submit_zero_fill(starpu_data_handle_t x, Where where, int priority) {
  insert_task(zero_fill_codelet, "zero_fill", where, priority, STARPU_W, x);
}

void submit_add_into(starpu_data_handle_t dst, starpu_data_handle_t src, Where where,
                     int priority) {
  insert_task(add_into_codelet, "add_into", where, priority, STARPU_RW, dst, STARPU_R, src);
}

}  // namespace starcnn
