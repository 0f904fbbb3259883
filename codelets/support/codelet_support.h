// Glue shared by every codelet: worker-kind masks, perf models keyed by shape, submit checks.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>

#include "codelets/support/simulated_models.h"

// A CUDA implementation where starcnn was built with CUDA; against StarPU's SimGrid build (which
// simulates CUDA workers and never runs a task), a stand-in that lets them take the task; none
// elsewhere.
#ifdef STARCNN_USE_CUDA
#define STARCNN_CUDA_FUNC(f) (f)
#elif defined(STARPU_SIMGRID)
#define STARCNN_CUDA_FUNC(f) (&::starcnn::simulated_cuda_task)
#else
#define STARCNN_CUDA_FUNC(f) nullptr
#endif

namespace starcnn {

// Which kinds of worker may run a task; a split plan gives one per part. A task may also be pinned
// to the worker of one CUDA device (cuda_device()) or to one CPU worker (cpu_worker()): the kind's
// bit, plus the device or CPU worker number + 1 in the bits above kWhereKindBits.
enum class Where : uint32_t {
  any = STARPU_CPU | STARPU_CUDA,
  cpu = STARPU_CPU,
  cuda = STARPU_CUDA,
};

constexpr uint32_t kWhereKindBits = 0xffff;
constexpr int kWhereDeviceShift = 16;

// The worker of CUDA device `device` alone (a plan's cuda0, cuda1, ...).
constexpr Where cuda_device(int device) {
  return Where(uint32_t(STARPU_CUDA) | (uint32_t(device + 1) << kWhereDeviceShift));
}
// CPU worker number `index` (StarPU's devid of CPU workers, 0 .. CPU workers - 1) alone: a CPU
// micro-batch's task chain.
constexpr Where cpu_worker(int index) {
  return Where(uint32_t(STARPU_CPU) | (uint32_t(index + 1) << kWhereDeviceShift));
}
// The kinds of worker of `where`, whatever device it names: Where::cuda for cuda_device(d).
constexpr Where kind_of(Where where) {
  return Where(uint32_t(where) & kWhereKindBits);
}
// The CUDA device or CPU worker number `where` pins its tasks to, or -1 when any worker of its
// kinds may run them.
constexpr int device_of(Where where) {
  return int(uint32_t(where) >> kWhereDeviceShift) - 1;
}

#ifdef STARPU_SIMGRID
// The CUDA implementation of every codelet in a SimGrid build, doing nothing: simulated tasks
// are not run.
void simulated_cuda_task(void *buffers[], void *cl_arg);
#endif

// A history-based perf model named `symbol`. Its footprint hashes the task's packed arguments
// (the shapes) together with every buffer's size, so each shape and part size gets its own entry.
starpu_perfmodel history_model(const char *symbol);

// A history-based model whose footprint hashes only the task's first packed argument (the shape):
// for ops whose tasks may read a block of samples of a larger tensor (the conv2d codelets), so
// that the block's entry is the same whatever tensor it is cut from.
starpu_perfmodel shape_history_model(const char *symbol);

// A history-based model with StarPU's default footprint (buffer sizes only), for ops whose
// arguments hold hyper-parameters rather than shapes.
starpu_perfmodel size_history_model(const char *symbol);

// A codelet with one CPU and (where built) one asynchronous CUDA implementation. Empty `modes`
// means a variable number of buffers, whose modes each submit gives.
starpu_codelet make_codelet(const char *name, starpu_cpu_func_t cpu, starpu_cuda_func_t cuda,
                            starpu_perfmodel *model,
                            std::initializer_list<starpu_data_access_mode> modes);

// "cpu", "cuda", "cuda1" (a pinned device), "cpu3" (a pinned CPU worker) or "any": the plans'
// spelling.
std::string where_name(Where where);

// The STARPU_EXECUTE_WHERE argument of starpu_task_insert for `where`.
inline unsigned long long where_mask(Where where) {
  return static_cast<unsigned long long>(kind_of(where));
}

// The StarPU worker that runs the tasks `where` pins to a CUDA device or CPU worker, or -1 when it
// pins none. Throws std::runtime_error naming `op` and the device when StarPU has no worker for it.
int pinned_worker(Where where, const char *op);

// Throws std::invalid_argument naming `op` and the buffer (`what`) when the vector handle does not
// hold `want` elements: a wrong size would make a kernel read or write out of bounds.
void check_vector_length(starpu_data_handle_t handle, size_t want, const char *op,
                         const char *what);

// Tasks submitted through check_submit() since the program started (for tasks-per-step reports).
uint64_t submitted_task_count();

// Throws std::runtime_error naming `op` when starpu_task_insert failed; -ENODEV means no worker
// of the allowed kinds can run it.
void check_submit(int ret, const char *op);

// True when a TaskLog (task_log.h) records tasks instead of submitting them.
bool log_instead_of_submitting(const char *op, Where where);

// Submits one task of `codelet`: `args` are starpu_task_insert's (access modes and handles,
// STARPU_VALUE triples, ...); this adds the worker kinds `where` (or the worker of the CUDA device
// it pins), the priority and the closing 0,
// and throws (check_submit) naming `op` when StarPU refuses the task.
template <typename... Args>
void insert_task(starpu_codelet &codelet, const char *op, Where where, int priority, Args... args) {
  if (log_instead_of_submitting(op, where)) return;
  const int worker = pinned_worker(where, op);
#ifdef STARPU_SIMGRID
  starpu_task *task = worker < 0
                          ? starpu_task_build(&codelet, args..., STARPU_EXECUTE_WHERE,
                                              where_mask(where), STARPU_PRIORITY, priority, 0)
                          : starpu_task_build(&codelet, args..., STARPU_EXECUTE_ON_WORKER, worker,
                                              STARPU_PRIORITY, priority, 0);
  check_simulated_task(task, op);
  const int ret = starpu_task_submit(task);
  charge_submit_cost();
#else
  const int ret = worker < 0 ? starpu_task_insert(&codelet, args..., STARPU_EXECUTE_WHERE,
                                                  where_mask(where), STARPU_PRIORITY, priority, 0)
                             : starpu_task_insert(&codelet, args..., STARPU_EXECUTE_ON_WORKER,
                                                  worker, STARPU_PRIORITY, priority, 0);
#endif
  check_submit(ret, op);
}

// A codelet's task functions from its kernels: `gather(buffers, cl_arg)` returns the kernel's
// arguments as a tuple; the CPU task passes them to `kernel`, the CUDA task passes them and then
// the worker's stream (the CUDA launchers' last parameter).
template <auto kernel, auto gather>
void cpu_task(void *buffers[], void *cl_arg) {
  std::apply(kernel, gather(buffers, cl_arg));
}
#ifdef STARCNN_USE_CUDA
template <auto kernel, auto gather>
void cuda_task(void *buffers[], void *cl_arg) {
  std::apply(kernel, std::tuple_cat(gather(buffers, cl_arg),
                                    std::make_tuple(starpu_cuda_get_local_stream())));
}
#endif

// The codelet of a CPU kernel and its CUDA twin whose tasks take their arguments from `gather`
// (cpu_task, cuda_task); the remaining arguments are make_codelet's: perf model, then modes.
#define STARCNN_KERNEL_CODELET(name, cpu_kernel, cuda_kernel, gather, ...)                \
  ::starcnn::make_codelet(name, ::starcnn::cpu_task<cpu_kernel, gather>,                  \
                          STARCNN_CUDA_FUNC((::starcnn::cuda_task<cuda_kernel, gather>)), \
                          __VA_ARGS__)

// Elements in a vector handle's local buffer.
inline size_t vector_length(void *buffer) {
  return STARPU_VECTOR_GET_NX(buffer);
}
inline float *vector_data(void *buffer) {
  return reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffer));
}
// The int32 elements of a vector handle's local buffer (argmax indices, labels).
inline int32_t *int32_vector_data(void *buffer) {
  STARPU_ASSERT(STARPU_VECTOR_GET_ELEMSIZE(buffer) == sizeof(int32_t));
  return reinterpret_cast<int32_t *>(STARPU_VECTOR_GET_PTR(buffer));
}

}  // namespace starcnn
