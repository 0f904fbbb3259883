// The end of a `--trace DIR` run: after StarPU has shut down and written its FxT trace, turns it
// into the files StarVZ and ViTE read (paje.trace, tasks.rec, ...) and runs perf/trace_report.py
// on them (trace.png, summary.txt).
#pragma once

#include <string>

namespace starcnn {

// A trace needs a libstarpu built with FxT; starcnn links the fast one, built without (FxT costs
// per task even when nothing is recorded). When the loaded libstarpu has no FxT, restarts this
// program (execv, same arguments) with the FxT build's library folder first on LD_LIBRARY_PATH:
// STARCNN_FXT_STARPU_LIB when set, else lib/fxt/ beside the program's bin/ (the GPU bundle), else
// the one the build was configured with. Returns only when the loaded libstarpu has FxT; throws
// UsageError naming what is missing otherwise. Call it before StarPU starts.
void ensure_starpu_with_fxt(char **argv);

// Creates `dir` (and its parents) so StarPU can write the trace there; throws UsageError when it
// cannot.
void prepare_trace_dir(const std::string &dir);

// Converts the trace of `dir` and writes the report, printing what it made. Returns false, after
// printing why, when starpu_fxt_tool is missing or fails; a missing python3 only prints the
// command that makes the report.
// `ranks`: the processes of a run under mpirun, whose traces are converted together.
bool finish_trace(const std::string &dir, int ranks = 1);

}  // namespace starcnn
