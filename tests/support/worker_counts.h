// Counts how many tasks each kind of worker executed, from StarPU's profiling counters.
#pragma once

#include <starpu.h>
#include <starpu_profiling.h>

namespace starcnn::testing {

struct WorkerCounts {
  int cpu_tasks = 0;
  int cuda_tasks = 0;
};

// Turns profiling on; counters start from zero.
inline void start_counting_tasks() {
  starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    starpu_profiling_worker_info info;
    starpu_profiling_worker_get_info(static_cast<int>(w), &info);  // reading resets it
  }
}

// Tasks executed since start_counting_tasks() (or the last call), per kind of worker.
inline WorkerCounts count_tasks() {
  starpu_task_wait_for_all();
  WorkerCounts counts;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    starpu_profiling_worker_info info;
    starpu_profiling_worker_get_info(static_cast<int>(w), &info);
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER)
      counts.cuda_tasks += info.executed_tasks;
    else if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CPU_WORKER)
      counts.cpu_tasks += info.executed_tasks;
  }
  return counts;
}

}  // namespace starcnn::testing
