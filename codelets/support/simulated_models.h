// Task times under StarPU's SimGrid mode, where no task runs and each takes the time its history
// perf model gives for its shape: a check that names a shape the models lack (StarPU itself would
// abort), and, for predictions of shapes never run on the calibrated machine (a filter part split
// across GPUs, a micro-batch of another size), estimates from the entries of nearest data size.
// Only in a build against StarPU with SimGrid.
#pragma once

#include <starpu.h>

#ifdef STARPU_SIMGRID

#include <string>
#include <vector>

namespace starcnn {

// Throws std::runtime_error naming `op`, its footprint and the kind of worker whose perf model
// has no entry for the task's shape, among those that may run it; the task (built, not yet
// submitted) is then destroyed. With estimates on, only a model without any entry of that kind
// of worker is an error.
void check_simulated_task(starpu_task *task, const char *op);

// From now on, `codelet`'s perf model answers from its history file: the entry of the task's
// footprint where there is one, else an estimate from the entries of the same kind of worker by
// data size (linear between the nearest smaller and larger sizes; below the smallest, its time;
// above the largest, the line through the two largest, at least the largest's time; an op
// without any entry on that kind of worker is
// timed as add_into of the same bytes). Call after starpu_init and before the codelet's
// first task. Codelets submitted through insert_task are switched on their first task once
// estimate_missing_shapes() was called; those StarPU submits itself (reductions) must be given.
void estimate_missing_shapes();
void estimate_missing_shapes_of(starpu_codelet &codelet);
// Shapes (model, footprint, kind of worker) that took an estimate so far, as "symbol on cuda,
// N bytes" lines.
std::vector<std::string> estimated_shapes();

}  // namespace starcnn

#endif
