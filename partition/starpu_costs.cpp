#include "partition/starpu_costs.h"

#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_task_support.h"

#include <cmath>
#include <limits>
#include <vector>

namespace starcnn {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// The expected length of a task of `codelet` with argument `args` and buffers of `counts` floats on
// `worker`'s kind, as the scheduler would see it: the buffers are placeholders with no memory,
// registered only so that the footprint hashes the same sizes as the real task's.
double expected_us(starpu_codelet *codelet, const void *args, size_t args_size,
                   const std::vector<size_t> &counts, int worker) {
  if (worker < 0) return kUnknown;
  std::vector<starpu_data_handle_t> handles(counts.size());
  for (size_t i = 0; i < counts.size(); ++i)
    starpu_vector_data_register(&handles[i], -1, 0, uint32_t(counts[i]), sizeof(float));
  starpu_task task;
  starpu_task_init(&task);
  task.cl = codelet;
  starpu_codelet_pack_args(&task.cl_arg, &task.cl_arg_size, STARPU_VALUE, args, args_size, 0);
  task.cl_arg_free = 1;
  task.nbuffers = int(handles.size());
  if (handles.size() > STARPU_NMAXBUFS) {
    // starpu_task_clean frees it.
    task.dyn_handles =
        static_cast<starpu_data_handle_t *>(malloc(handles.size() * sizeof(starpu_data_handle_t)));
  }
  for (size_t i = 0; i < handles.size(); ++i) STARPU_TASK_SET_HANDLE(&task, handles[i], int(i));
  starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(worker, STARPU_NMAX_SCHED_CTXS);
  const double us = starpu_task_expected_length(&task, arch, 0);
  starpu_task_clean(&task);
  for (starpu_data_handle_t h : handles) starpu_data_unregister_no_coherency(h);
  return us;
}

size_t col_count(const Conv2dShape &s) {
  return s.pointwise() ? 1 : s.col_rows() * s.col_cols();
}

}  // namespace

StarpuCosts::StarpuCosts() {
  cpu_worker_ = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
  cuda_worker_ = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0);
}

// Arguments and buffers as submit_conv2d_*() pass them (codelets/conv2d_*.cpp).
double StarpuCosts::conv_us(ConvOp op, const Conv2dShape &s, bool accumulate, Side side) const {
  const Conv2dGradientArgs grad{
      s, accumulate ? GradientAccess::accumulate : GradientAccess::overwrite};
  switch (op) {
    case ConvOp::forward:
      return expected_us(&conv2d_forward_codelet, &s, sizeof(s),
                         {s.x_count(), s.w_count(), s.b_count(), s.y_count(), col_count(s)},
                         worker_of(side));
    case ConvOp::backward_filter:
      return expected_us(&conv2d_backward_filter_codelet, &grad, sizeof(grad),
                         {s.x_count(), s.y_count(), s.w_count(), s.b_count(), col_count(s)},
                         worker_of(side));
    case ConvOp::backward_data:
      return expected_us(&conv2d_backward_data_codelet, &grad, sizeof(grad),
                         {s.w_count(), s.y_count(), s.x_count(), col_count(s)}, worker_of(side));
  }
  return kUnknown;
}

// As submit_merge() and submit_split() pass them (codelets/merge.cpp).
double StarpuCosts::merge_us(const MergeShape &shape, bool split, Side side) const {
  std::vector<size_t> counts;
  if (split) counts.push_back(shape.whole_count());
  for (uint32_t p = 0; p < shape.parts; ++p) counts.push_back(shape.part_count(p));
  if (!split) counts.push_back(shape.whole_count());
  return expected_us(split ? &split_codelet : &merge_codelet, &shape, sizeof(shape), counts,
                     worker_of(side));
}

double StarpuCosts::transfer_us(size_t bytes, Side from, Side to) const {
  if (from == to) return 0;
  if (cuda_worker_ < 0) return kUnknown;
  const unsigned gpu = starpu_worker_get_memory_node(unsigned(cuda_worker_));
  return from == Side::cpu ? starpu_transfer_predict(STARPU_MAIN_RAM, gpu, bytes)
                           : starpu_transfer_predict(gpu, STARPU_MAIN_RAM, bytes);
}

}  // namespace starcnn
