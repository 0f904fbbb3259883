#include "codelets/support/codelet_support.h"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

// The bytes StarPU's packed arguments really hold (an int count, then each value's size_t size and
// bytes): starpu_task_insert's cl_arg_size is the buffer's allocated size, whose tail is
// uninitialised and would give every task its own footprint.
size_t packed_args_length(const void *cl_arg, size_t cl_arg_size) {
  const char *bytes = static_cast<const char *>(cl_arg);
  int nargs = 0;
  if (cl_arg_size < sizeof(nargs)) return cl_arg_size;
  std::memcpy(&nargs, bytes, sizeof(nargs));
  size_t used = sizeof(nargs);
  for (int i = 0; i < nargs && used + sizeof(size_t) <= cl_arg_size; ++i) {
    size_t size = 0;
    std::memcpy(&size, bytes + used, sizeof(size));
    used += sizeof(size) + size;
  }
  return used < cl_arg_size ? used : cl_arg_size;
}

uint32_t args_and_sizes_footprint(starpu_task *task) {
  uint32_t hash = 0;
  if (task->cl_arg && task->cl_arg_size > 0)
    hash = starpu_hash_crc32c_be_n(task->cl_arg,
                                   packed_args_length(task->cl_arg, task->cl_arg_size), hash);
  const unsigned nbuffers = STARPU_TASK_GET_NBUFFERS(task);
  for (unsigned i = 0; i < nbuffers; ++i) {
    const size_t size = starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
    hash = starpu_hash_crc32c_be_n(&size, sizeof(size), hash);
  }
  return hash;
}

// The first packed value: StarPU packs an int count, then each value's size_t size and bytes.
uint32_t first_arg_footprint(starpu_task *task) {
  const char *bytes = static_cast<const char *>(task->cl_arg);
  int nargs = 0;
  size_t size = 0;
  const size_t header = sizeof(nargs) + sizeof(size);
  if (!bytes || task->cl_arg_size < header) return 0;
  std::memcpy(&nargs, bytes, sizeof(nargs));
  std::memcpy(&size, bytes + sizeof(nargs), sizeof(size));
  if (nargs < 1 || size > task->cl_arg_size - header) return 0;
  return starpu_hash_crc32c_be_n(bytes + header, size, 0);
}

starpu_perfmodel make_model(const char *symbol) {
  starpu_perfmodel model;
  std::memset(&model, 0, sizeof(model));
  model.type = STARPU_HISTORY_BASED;
  model.symbol = symbol;
  return model;
}

}  // namespace

#ifdef STARPU_SIMGRID
// Tasks are only timed; StarPU calls a reduction's initialiser itself, and it has nothing to do on
// a simulated GPU's memory.
void simulated_cuda_task(void *[], void *) {}
#endif

starpu_perfmodel history_model(const char *symbol) {
  starpu_perfmodel model = make_model(symbol);
  model.footprint = args_and_sizes_footprint;
  return model;
}

starpu_perfmodel shape_history_model(const char *symbol) {
  starpu_perfmodel model = make_model(symbol);
  model.footprint = first_arg_footprint;
  return model;
}

starpu_perfmodel size_history_model(const char *symbol) {
  return make_model(symbol);
}

starpu_codelet make_codelet(const char *name, starpu_cpu_func_t cpu, starpu_cuda_func_t cuda,
                            starpu_perfmodel *model,
                            std::initializer_list<starpu_data_access_mode> modes) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.name = name;
  cl.cpu_funcs[0] = cpu;
  if (cuda) {
    cl.cuda_funcs[0] = cuda;
    cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
  }
  cl.model = model;
  if (modes.size() == 0) {
    cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
  } else {
    cl.nbuffers = static_cast<int>(modes.size());
    int i = 0;
    for (starpu_data_access_mode mode : modes) cl.modes[i++] = mode;
  }
  return cl;
}

namespace {
std::atomic<uint64_t> submitted_tasks{0};
}  // namespace

uint64_t submitted_task_count() {
  return submitted_tasks.load(std::memory_order_relaxed);
}

std::string where_name(Where where) {
  const Where kind = kind_of(where);
  const std::string name = kind == Where::cpu ? "cpu" : kind == Where::cuda ? "cuda" : "any";
  return device_of(where) >= 0 ? name + std::to_string(device_of(where)) : name;
}

int pinned_worker(Where where, const char *op) {
  const int device = device_of(where);
  if (device < 0) return -1;
  const bool cpu = kind_of(where) == Where::cpu;
  const int worker =
      starpu_worker_get_by_devid(cpu ? STARPU_CPU_WORKER : STARPU_CUDA_WORKER, device);
  if (worker < 0) {
    const unsigned count = cpu ? starpu_cpu_worker_get_count() : starpu_cuda_worker_get_count();
    throw std::runtime_error(std::string(op) + " is pinned to " +
                             (cpu ? "CPU worker " : "CUDA device ") + std::to_string(device) +
                             " (" + where_name(where) + ") but StarPU has no worker for it (" +
                             std::to_string(count) + (cpu ? " CPU" : " CUDA") + " workers)");
  }
  return worker;
}

void check_vector_length(starpu_data_handle_t handle, size_t want, const char *op,
                         const char *what) {
  const size_t got = starpu_vector_get_nx(handle);
  if (got != want)
    throw std::invalid_argument(std::string(op) + ": " + what + " holds " + std::to_string(got) +
                                " elements, the shape needs " + std::to_string(want));
}

void check_submit(int ret, const char *op) {
  if (ret == 0) {
    submitted_tasks.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (ret == -ENODEV)
    throw std::runtime_error(std::string("no StarPU worker of the allowed kinds can run ") + op);
  throw std::runtime_error(std::string("submitting ") + op + " failed: " + std::strerror(-ret));
}

}  // namespace starcnn
