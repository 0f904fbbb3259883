// CPU workers put to sleep while a plan leaves them idle. StarPU 1.3's idle workers poll without
// pause, and 15 of them slowed the H200's CUDA tasks 1.05-1.33x (call g); parked, each sleeps in a
// task of ours (not in StarPU's "blocked in parallel" state, which slows every later scheduling
// decision of the process: parked_workers.cpp) and the GPU's tasks run as with one CPU worker.
#pragma once

#include <functional>

namespace starcnn {

// Runs `work` with every CPU worker but the first `keep` asleep; the tasks this thread submits
// meanwhile go to a scheduling context of the awake workers (same policy) and run there. The
// workers are given back afterwards, also when `work` throws (its exception is rethrown). Nothing
// is parked when `keep` is not below the CPU worker count, nor in a SimGrid build (its workers do
// not poll); `keep` must be at least 1 (batches load on a CPU worker). Call with no task in
// flight, from the thread that submits `work`'s tasks (another thread's starpu_task_wait_for_all
// would also wait for the sleepers); each call takes one of StarPU's scheduling contexts for the
// rest of the run (STARPU_NMAX_SCHED_CTXS, 10 by default). Throws std::logic_error when called
// from a task or callback (a worker's thread).
void run_with_cpu_workers_parked(int keep, const std::function<void()> &work);

// CPU workers asleep now (0 outside run_with_cpu_workers_parked).
int parked_cpu_workers();

// Whether this StarPU instance holds parking's scheduling contexts (a run_with_cpu_workers_parked
// call that parked anyone since the last forget_parking_contexts). Their workers then belong to
// several contexts for the rest of the run; restart_for_plan restarts StarPU rather than train
// the chosen plan that way. Runtime forgets them when it starts StarPU.
bool holds_parking_contexts();
void forget_parking_contexts();

}  // namespace starcnn
