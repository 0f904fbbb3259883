#include "model/runtime/parked_workers.h"

#include <starpu.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {
namespace {

std::atomic<int> parked{0};
std::atomic<bool> contexts_made{false};
constexpr unsigned kGlobalContext = 0;  // StarPU's initial context, which tasks go to by default

// Where the parked workers wait: each runs one task that sleeps here until the gate opens.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  int asleep = 0;
  bool open = false;
};

void sleep_until_open(void *[], void *arg) {
  Gate &gate = *static_cast<Gate *>(arg);
  std::unique_lock<std::mutex> lock(gate.mutex);
  ++gate.asleep;
  gate.changed.notify_all();
  gate.changed.wait(lock, [&] { return gate.open; });
}

starpu_codelet park_codelet = [] {
  starpu_codelet c{};
  c.where = STARPU_CPU;
  c.cpu_funcs[0] = sleep_until_open;
  c.nbuffers = 0;
  c.name = "starcnn_parked";
  return c;
}();

// Creating a scheduling context with a policy resets StarPU 1.3's calibrate flag
// (_starpu_init_sched_policy), and without it starpu_shutdown saves no perf model: every shape
// measured so far in the run (auto's candidates) would be lost. Recording one real measurement,
// how long the context took to set up, sets the flag again through StarPU's public API.
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

void wake(std::vector<starpu_task *> &tasks, Gate &gate) {
  {
    std::lock_guard<std::mutex> lock(gate.mutex);
    gate.open = true;
  }
  gate.changed.notify_all();
  // A task that could not be waited for may still run: it is left, not destroyed.
  for (starpu_task *task : tasks)
    if (starpu_task_wait(task) == 0) starpu_task_destroy(task);
  tasks.clear();
}

// One sleeping task pinned to each of `workers` (in the global context, which the work's tasks
// do not go to); returns once every one has started.
std::vector<starpu_task *> put_to_sleep(const std::vector<int> &workers, Gate &gate) {
  std::vector<starpu_task *> tasks;
  for (int worker : workers) {
    starpu_task *task = starpu_task_create();
    task->cl = &park_codelet;
    task->cl_arg = &gate;
    task->execute_on_a_specific_worker = 1;
    task->workerid = unsigned(worker);
    task->sched_ctx = kGlobalContext;
    task->detach = 0;
    task->destroy = 0;
    const int ret = starpu_task_submit(task);
    if (ret != 0) {
      starpu_task_destroy(task);
      wake(tasks, gate);
      throw std::runtime_error("parking CPU worker " + std::to_string(worker) +
                               ": starpu_task_submit returned " + std::to_string(ret));
    }
    tasks.push_back(task);
  }
  std::unique_lock<std::mutex> lock(gate.mutex);
  gate.changed.wait(lock, [&] { return gate.asleep == int(tasks.size()); });
  return tasks;
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
  // A task or callback cannot wait for the sleepers: left asleep, they would outlive the gate on
  // this stack that they sleep on.
  if (starpu_worker_get_id() >= 0)
    throw std::logic_error("CPU workers cannot be parked from a task or callback");
#ifdef STARPU_SIMGRID
  // A simulated worker does not poll, and one blocked outside SimGrid would stop the simulation.
  work();
  return;
#endif
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
  // This thread submits to a context of the awake workers under the same policy, so that no task
  // is queued on a sleeper. StarPU 1.3 crashes deleting a context whose workers belong to another
  // (sched_ctx_list.c), so it lives until shutdown.
  const auto setup_start = std::chrono::steady_clock::now();
  const starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(kGlobalContext);
  contexts_made = true;
  unsigned active = starpu_sched_ctx_create(awake.data(), int(awake.size()), "starcnn-awake",
                                            STARPU_SCHED_CTX_POLICY_NAME, policy->policy_name, 0);
  keep_perf_models_saved(
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - setup_start)
          .count());
  // The sleepers sleep in a task of ours rather than in StarPU's "blocked in parallel" state
  // (starpu_sched_ctx_exec_parallel_code): blocking once turns on, for the rest of the process
  // and every later StarPU in it, a check in every starpu_worker_can_execute_task that locks the
  // worker and waits for it to relax. The stacks of a later cpu-only run (16 workers, lws) that
  // stalled show a worker in that check (perf/results/h100-2026-12-07-g,
  // bench-lenet-256.err.stacks).
  Gate gate;
  std::vector<starpu_task *> sleeping = put_to_sleep(sleepers, gate);
  unsigned global = kGlobalContext;
  starpu_sched_ctx_set_context(&active);
  parked = int(sleepers.size());
  std::exception_ptr error;
  try {
    work();
  } catch (...) {
    error = std::current_exception();
  }
  parked = 0;
  starpu_task_wait_for_all();
  starpu_sched_ctx_set_context(&global);
  wake(sleeping, gate);
  if (error) std::rethrow_exception(error);
}

}  // namespace starcnn
