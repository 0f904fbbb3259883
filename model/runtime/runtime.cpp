#include "model/runtime/runtime.h"

#include "model/runtime/launch_env.h"
#include "model/runtime/parked_workers.h"
#include "model/runtime/starpu_env.h"

#include "codelets/support/codelet_runtime.h"

#include <starpu.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

// Beside a GPU, with StarPU's own count of CPU workers, the thread that submits the tasks gets a
// core of its own (one CPU worker less): unbound, it took a core from a sample split's CPU chains,
// one of which then ran 2x the others in every step (perf/results/h200-2026-12-04-f); bound,
// lenet b256's splits under the H200's MPS cap took 0.65-0.83x as long and auto chose one (-k).
// Never for a given worker count: StarPU takes the core from those workers, and STARPU_NCPU=1 was
// left with none (-l); nor under mpirun, where ranks share the cores by their own rule; nor where
// the user set STARPU_MAIN_THREAD_BIND.
void choose_main_thread_binding(const RuntimeOptions &options) {
  static const bool user_set = std::getenv("STARPU_MAIN_THREAD_BIND") != nullptr;
  if (user_set) return;
  const bool bind = options.ncpu < 0 && !std::getenv("STARPU_NCPU") && options.ncuda != 0 &&
                    !launched_by_mpirun() && cuda_devices_for_starpu() > 0;
  setenv("STARPU_MAIN_THREAD_BIND", bind ? "1" : "0", 1);
}

}  // namespace

Runtime::Runtime(const RuntimeOptions &options) {
  // STARPU_SCHED wins over starpu_conf in StarPU, so a chosen policy is set through it.
  if (!options.scheduler.empty()) setenv("STARPU_SCHED", options.scheduler.c_str(), 1);
  check_starpu_environment();  // StarPU itself aborts on a malformed worker count
  set_starpu_defaults();
  choose_main_thread_binding(options);
  if (!options.trace_dir.empty()) {
    setenv("STARPU_FXT_TRACE", "1", 1);
    setenv("STARPU_FXT_PREFIX", (options.trace_dir + "/").c_str(), 1);
  }
  // StarPU's default policy (lws) ignores the perf models: on a GPU machine it spreads small tasks
  // over the CPU workers and moves data back and forth (lenet trained 6x slower on an H200 than
  // under dmdas). With a GPU, and no STARPU_SCHED, starcnn asks for dmdas.
  starpu_conf conf;
  starpu_conf_init(&conf);
  if (options.ncuda >= 0) conf.ncuda = options.ncuda;
  if (options.ncpu >= 0) conf.ncpus = options.ncpu;
  if (!std::getenv("STARPU_SCHED") && cuda_devices_for_starpu() > 0) {
    conf.sched_policy_name = "dmdas";
    chose_scheduler_ = true;
  }
  const int ret = starpu_initialize(&conf, options.argc, options.argv);
  if (ret == -ENODEV) throw std::runtime_error("StarPU found no worker to run tasks on");
  if (ret != 0)
    throw std::runtime_error("StarPU failed to start (error " + std::to_string(ret) + ")");
  // Batches are loaded by CPU tasks: without a CPU worker every run would wait forever (H200:
  // STARPU_NCPU=1 with STARPU_RESERVE_NCPU=1 hung).
  if (starpu_cpu_worker_get_count() == 0) {
    starpu_shutdown();
    const auto value = [](const char *name) {
      const char *v = std::getenv(name);
      return std::string(name) + "=" + (v ? v : "(unset)");
    };
    throw std::runtime_error("StarPU started no CPU worker (" + value("STARPU_NCPU") + ", " +
                             value("STARPU_RESERVE_NCPU") +
                             "): starcnn needs one, which loads the batches");
  }
  start_codelet_resources();
  forget_parking_contexts();  // a new StarPU has none
}

Runtime::~Runtime() {
  starpu_task_wait_for_all();
  stop_codelet_resources();
  starpu_shutdown();
}

std::string Runtime::scheduler() const {
  const starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(0);
  return policy && policy->policy_name ? policy->policy_name : "unknown";
}

std::string Runtime::describe_scheduler() const {
  return scheduler() +
         (chose_scheduler_ ? " (starcnn's choice with a GPU; STARPU_SCHED picks another)" : "");
}

MachineWorkers Runtime::workers() const {
  return {int(starpu_cpu_worker_get_count()), int(starpu_cuda_worker_get_count())};
}

std::string Runtime::describe_workers() const {
  const MachineWorkers w = workers();
  std::string out = std::to_string(w.cpu) + " CPU worker" + (w.cpu == 1 ? "" : "s") + ", " +
                    std::to_string(w.cuda) + " CUDA worker" + (w.cuda == 1 ? "" : "s");
  if (w.cuda > 0) {
    int ids[STARPU_NMAXWORKERS];
    const unsigned n = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, STARPU_NMAXWORKERS);
    std::string names;
    for (unsigned i = 0; i < n; ++i) {
      char name[128];
      starpu_worker_get_name(ids[i], name, sizeof(name));
      names += (i ? "; " : "") + std::string(name);
    }
    out += " (" + names + ")";
  }
  return out;
}

}  // namespace starcnn
