// Task times under StarPU's SimGrid mode, where no task runs and each takes the time its history
// perf model gives for its shape: a check that names a shape the models lack (StarPU itself would
// abort), and, for predictions of shapes never run on the calibrated machine (a filter part split
// across GPUs, a micro-batch of another size), estimates from the entries of nearest data size.
// Only in a build against StarPU with SimGrid.
#pragma once

#include <starpu.h>

namespace starcnn {

// StarPU's own cost per task on a machine, in microseconds (perf/task_overhead measures it): the
// submitting thread's per task, and a dependent task's on each kind of worker. `parallel_cpu_us`:
// a task's when every CPU worker pushes and pops at once (cpu_parallel_chain_us), the gap between
// the starts of a step's CPU chains, which one task's end readies together and which started
// ~45 us apart in the H100's traces under the MPS cap, where task_overhead gave 47 us
// (perf/results/h100-2026-12-08-a); 0 where not measured.
struct TaskOverheads {
  double submit_us = 0, cpu_us = 0, cuda_us = 0, parallel_cpu_us = 0;
};

// The expected k-th smallest (1 <= k <= n) of n independent draws from the standard normal
// distribution, E[Z_(k)] = integral of x n C(n-1, k-1) phi(x) Phi(x)^(k-1) (1 - Phi(x))^(n-k) dx:
// -E[Z_(n+1-k)] by symmetry, 0 for the middle of an odd n (0 for k or n out of range); the
// largest (k = n) 0 for n = 1, 1/sqrt(pi) for n = 2, ~1.74 for n = 15.
double expected_order_statistic_of_normals(unsigned k, unsigned n);

}  // namespace starcnn

#ifdef STARPU_SIMGRID

#include <string>
#include <vector>

namespace starcnn {

// Throws std::runtime_error naming `op`, its footprint and the kind of worker whose perf model
// has no entry for the task's shape, among those that may run it; the task (built, not yet
// submitted) is then destroyed. With estimates on, only a model without any entry of that kind
// of worker is an error.
void check_simulated_task(starpu_task *task, const char *op);

// From now on, perf models answer from their history files: the entry of the task's footprint
// where there is one, else an estimate from the entries of the same kind of worker by data size
// (linear between the nearest smaller and larger sizes; below the smallest, its time; above the
// largest, the line through the two largest, at least the largest's time; an op without any
// entry on that kind of worker is timed as add_into of the same bytes). Call after starpu_init.
void estimate_missing_shapes();
// Switches `codelet`'s perf model to starcnn's cost function, which answers as above (with
// estimates where estimate_missing_shapes() was called) plus the overheads that
// charge_task_overheads() set. Codelets submitted through insert_task are switched on their first
// task once either was called; those StarPU submits itself (reductions) must be given here, before
// their first task.
void use_simulated_costs(starpu_codelet &codelet);
// Shapes (model, footprint, kind of worker) that took an estimate so far, as "symbol on cuda,
// N bytes" lines.
std::vector<std::string> estimated_shapes();

// From now on, the CPU chain tasks (starcnn_cpu_chain, one micro-batch's whole pass each) that a
// step runs side by side are charged as draws of their spread, not each one's mean: a step waits
// for its last chain, and the history entry of a chain holds its mean and standard deviation over
// every run of that shape (StarPU keeps sum and sum of squares). A step's chains pinned to one CPU
// worker share a draw (the worker's speed), each other chain is a draw of its own; of a step's n
// draws, the k-th to be submitted is charged mean + deviation *
// expected_order_statistic_of_normals(k, n), the last one the expected slowest. The earlier ones
// end earlier, as on the machine, where each chain's gradient add runs as it ends (charging every
// chain the slowest put all n adds after the last chain: wide's 0.9 ms adds, 8 of them, made its
// sample splits 15-26% slow in perf/results/sim-h100-2026-12-08-a). With charge_task_overheads,
// the k-th draw's chains also start (k - 1) x parallel_cpu_us late (charged as time of theirs).
// n is the count of draws of the chain tasks a step submits together (between two tasks of other
// ops, batch loads apart), as the last step submitted them. An estimated shape's deviation is
// estimated as its mean.
void charge_chain_spread();

// StarPU's SimGrid mode gives no time at all to the tasks StarPU submits itself (internal jobs,
// such as a STARPU_REDUX reduction's sums: _starpu_simgrid_submit_job returns on them), where call
// h's traces show a lenet CPU step's reductions, one handle after another, take ~1.5 ms. Makes
// `codelet`'s tasks, StarPU's or not, spend their cost (as use_simulated_costs answers: the model's
// time plus the overheads) in their worker's simulated time, by a function the simulation runs
// (STARPU_CODELET_SIMGRID_EXECUTE) that sleeps that long. Call after use_simulated_costs(codelet),
// before its first task; not for a codelet StarPU calls as an init function.
void time_internal_tasks(starpu_codelet &codelet);

// StarPU's own cost per task on the calibrated machine, which the perf models leave out (they time
// a codelet's function alone): each task is charged its kind of worker's cost on top of its
// model's time (through use_simulated_costs), and the submitting thread `submit_us` per task
// (StarPU's simulation charges 1 us itself, taken off). Call after starpu_init, before the first
// task.
void charge_task_overheads(const TaskOverheads &overheads);
// The submitting thread's cost of one task (called after each submission).
void charge_submit_cost();

}  // namespace starcnn

#endif
