// StarPU for a program's lifetime: starts it (honouring STARPU_SCHED, STARPU_NCPU, STARPU_NCUDA and
// the other STARPU_* variables; without STARPU_SCHED, dmdas where there is a GPU and StarPU's
// default elsewhere), the codelets' per-worker resources, and says what it found.
#pragma once

#include "partition/split_plan.h"

#include <string>

namespace starcnn {

// Every member has an initializer, so `Runtime runtime({dir})` leaves the rest at their defaults
// without a missing-initializer warning.
struct RuntimeOptions {
  std::string trace_dir{};  // FxT trace files go here (tracing stays off when empty, unless
                            // STARPU_FXT_TRACE=1)
  std::string scheduler{};  // overrides STARPU_SCHED when set (the tests' choice of policy)
  int ncuda = -1;           // CUDA workers at most (-1: StarPU's choice, STARPU_NCUDA)
  // The command line starpu_initialize reads (StarPU's SimGrid mode starts SimGrid from it when
  // it did not start before main); null: starpu_init's none.
  int *argc = nullptr;
  char ***argv = nullptr;
  int ncpu = -1;  // CPU workers (-1: StarPU's choice; STARPU_NCPU wins)
};

class Runtime {
 public:
  // Throws std::invalid_argument for a malformed STARPU_* variable (check_starpu_environment),
  // std::runtime_error when StarPU cannot start.
  explicit Runtime(const RuntimeOptions &options = {});
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  std::string scheduler() const;
  // True when starcnn chose the policy (dmdas, on a machine with a GPU and no STARPU_SCHED).
  bool chose_scheduler() const { return chose_scheduler_; }
  // "dmda" or "dmdas (starcnn's choice with a GPU; STARPU_SCHED picks another)"
  std::string describe_scheduler() const;
  MachineWorkers workers() const;
  // "2 CPU workers, 1 CUDA worker (NVIDIA H200)"
  std::string describe_workers() const;

 private:
  bool chose_scheduler_ = false;
};

}  // namespace starcnn
