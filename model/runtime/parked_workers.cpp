#include "model/runtime/parked_workers.h"

#include <starpu.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {
namespace {

std::atomic<int> parked{0};
std::atomic<bool> contexts_made{false};
constexpr unsigned kGlobalContext = 0;  // StarPU's initial context, which tasks go to by default

struct Work {
  const std::function<void()> *work;
  std::exception_ptr error;
};

// Creating a scheduling context with a policy resets StarPU 1.3's calibrate flag
// (_starpu_init_sched_policy), and without it starpu_shutdown saves no perf model: every shape
// measured so far in the run (auto's candidates) would be lost. Recording one real measurement,
// how long the contexts took to set up, sets the flag again through StarPU's public API.
void keep_perf_models_saved(double setup_us) {
  static starpu_perfmodel model = [] {
    starpu_perfmodel m{};
    m.type = STARPU_HISTORY_BASED;
    m.symbol = "starcnn_park_workers";
    return m;
  }();
  static starpu_codelet codelet = [] {
    starpu_codelet c{};
    c.where = STARPU_CPU;
    c.nbuffers = 0;
    c.model = &model;
    c.name = "park_workers";
    return c;
  }();
  const int cpu0 = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
  starpu_task *task = starpu_task_create();
  task->cl = &codelet;
  task->destroy = 0;
  starpu_perfmodel_update_history(&model, task,
                                  starpu_worker_get_perf_archtype(cpu0, STARPU_NMAX_SCHED_CTXS),
                                  unsigned(cpu0), 0, setup_us);
  starpu_task_destroy(task);
}

void *run_work(void *arg) {
  Work *w = static_cast<Work *>(arg);
  try {
    (*w->work)();
  } catch (...) {
    w->error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

int parked_cpu_workers() {
  return parked.load();
}

bool holds_parking_contexts() {
  return contexts_made.load();
}

void forget_parking_contexts() {
  contexts_made = false;
}

void run_with_cpu_workers_parked(int keep, const std::function<void()> &work) {
  if (keep < 1) throw std::invalid_argument("at least one CPU worker must stay awake");
  std::vector<int> cpu(STARPU_NMAXWORKERS);
  const int n =
      int(starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, cpu.data(), unsigned(cpu.size())));
  if (keep >= n) {
    work();
    return;
  }
  std::vector<int> sleepers(cpu.begin() + keep, cpu.begin() + n);
  std::vector<int> awake(cpu.begin(), cpu.begin() + keep);
  std::vector<int> cuda(STARPU_NMAXWORKERS);
  cuda.resize(
      starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, cuda.data(), unsigned(cuda.size())));
  awake.insert(awake.end(), cuda.begin(), cuda.end());
  starpu_task_wait_for_all();
  // The sleepers get a context of their own to be blocked through (StarPU blocks a context's CPU
  // workers around parallel code); this thread submits to a context of the awake workers under
  // the same policy, so that no task is queued on a sleeper. StarPU 1.3 crashes deleting a
  // context whose workers belong to another (sched_ctx_list.c), so both live until shutdown.
  const auto setup_start = std::chrono::steady_clock::now();
  const starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(kGlobalContext);
  contexts_made = true;
  const unsigned sleeping =
      starpu_sched_ctx_create(sleepers.data(), int(sleepers.size()), "starcnn-parked",
                              STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
  unsigned active = starpu_sched_ctx_create(awake.data(), int(awake.size()), "starcnn-awake",
                                            STARPU_SCHED_CTX_POLICY_NAME, policy->policy_name, 0);
  keep_perf_models_saved(
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - setup_start)
          .count());
  unsigned global = kGlobalContext;
  starpu_sched_ctx_set_context(&active);
  parked = int(sleepers.size());
  Work w{&work, nullptr};
  starpu_sched_ctx_exec_parallel_code(run_work, &w, sleeping);
  parked = 0;
  starpu_task_wait_for_all();
  starpu_sched_ctx_set_context(&global);
  if (w.error) std::rethrow_exception(w.error);
}

}  // namespace starcnn
