// Turns the FxT trace StarPU writes at shutdown (Runtime with a trace folder) into the files
// StarVZ and ViTE read, by running StarPU's starpu_fxt_tool on it.
#pragma once

#include <string>
#include <vector>

namespace starcnn {

// starpu_fxt_tool: next to the running executable (the GPU bundle's bin/), else in the bin/ of
// the StarPU this program was built against, else on PATH. Empty when none is found.
std::string find_fxt_tool();

// The newest FxT raw trace (prof_file_*) in `dir`; throws std::runtime_error when there is none.
std::string find_fxt_raw_trace(const std::string &dir);
// The newest `count` raw traces of `dir`, oldest first: one per rank of a run under mpirun (each
// rank's StarPU writes prof_file_USER_RANK). Throws std::runtime_error when there are fewer.
std::vector<std::string> find_fxt_raw_traces(const std::string &dir, int count);

// Runs `tool` on the newest raw trace of `dir` with `dir` as output folder (paje.trace,
// tasks.rec, data.rec, trace.rec, dag.dot, ...); its output goes to dir/starpu_fxt_tool.log.
// Returns the names of the files it made. Throws std::runtime_error when the tool fails or
// makes no paje.trace. Call it after StarPU has shut down (the raw trace is written then).
// With `ranks` > 1, converts the newest trace of every rank together: one paje.trace with every
// rank's workers and the MPI transfers between them.
std::vector<std::string> convert_fxt_trace(const std::string &dir, const std::string &tool,
                                           int ranks = 1);

}  // namespace starcnn
