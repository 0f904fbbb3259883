#include "codelets/accumulate.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

void zero_fill_cpu(float *x, size_t n) {
  std::memset(x, 0, n * sizeof(float));
}

void add_into_cpu(float *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] += src[i];
}

void add_all_cpu(float *dst, const float *const *srcs, size_t count, size_t n) {
  // Blocks that stay in cache while every source is added in.
  constexpr size_t kBlock = 4096;
  for (size_t first = 0; first < n; first += kBlock) {
    const size_t last = std::min(n, first + kBlock);
    for (size_t s = 0; s < count; ++s) {
      const float *__restrict src = srcs[s];
      float *__restrict out = dst;
      for (size_t i = first; i < last; ++i) out[i] += src[i];
    }
  }
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

// (dst, srcs, n): buffer 0 is dst, the others the sources.
auto add_all_args(void *buffers[], void *) {
  const size_t count = size_t(STARPU_TASK_GET_NBUFFERS(starpu_task_get_current())) - 1;
  std::vector<const float *> srcs(count);
  for (size_t s = 0; s < count; ++s) srcs[s] = vector_data(buffers[s + 1]);
  return std::make_tuple(vector_data(buffers[0]), std::move(srcs), vector_length(buffers[0]));
}

void add_all_on_cpu(float *dst, const std::vector<const float *> &srcs, size_t n) {
  add_all_cpu(dst, srcs.data(), srcs.size(), n);
}
#ifdef STARCNN_USE_CUDA
void add_all_on_cuda(float *dst, const std::vector<const float *> &srcs, size_t n,
                     cudaStream_t stream) {
  add_all_cuda(dst, srcs.data(), srcs.size(), n, stream);
}
#endif

starpu_perfmodel zero_fill_model = size_history_model("starcnn_zero_fill");
starpu_perfmodel add_all_model = size_history_model("starcnn_add_all");
starpu_perfmodel add_into_model = size_history_model("starcnn_add_into");

}  // namespace

starpu_codelet zero_fill_codelet = STARCNN_KERNEL_CODELET(
    "zero_fill", zero_fill_cpu, zero_fill_cuda, zero_fill_args, &zero_fill_model, {STARPU_W});
starpu_codelet add_into_codelet = STARCNN_KERNEL_CODELET(
    "add_into", add_into_cpu, add_into_cuda, add_into_args, &add_into_model, {STARPU_RW, STARPU_R});
starpu_codelet add_all_codelet = STARCNN_KERNEL_CODELET("add_all", add_all_on_cpu, add_all_on_cuda,
                                                        add_all_args, &add_all_model, {});

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

void submit_add_all(starpu_data_handle_t dst, const std::vector<starpu_data_handle_t> &srcs,
                    Where where, int priority) {
  if (srcs.empty()) throw std::invalid_argument("add_all: no vectors to add");
  std::vector<starpu_data_descr> descrs{{dst, STARPU_RW}};
  for (size_t s = 0; s < srcs.size(); ++s) {
    check_vector_length(srcs[s], starpu_vector_get_nx(dst), "add_all",
                        ("source " + std::to_string(s)).c_str());
    descrs.push_back({srcs[s], STARPU_R});
  }
  insert_task(add_all_codelet, "add_all", where, priority, STARPU_DATA_MODE_ARRAY, descrs.data(),
              int(descrs.size()));
}

}  // namespace starcnn
