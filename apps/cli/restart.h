// Restarting the running program in place, for settings a library reads only when it is loaded
// (the libstarpu that LD_LIBRARY_PATH picks for --trace, OPENBLAS_CORETYPE): the caller changes
// the environment first, and a marker variable it sets keeps the new process from restarting
// again.
#pragma once

#include <string>

namespace starcnn {

// Replaces this process by the same executable with the same arguments and the current
// environment (execv of /proc/self/exe), after flushing every output stream. Returns only when
// that fails, with the reason.
std::string restart_self(char **argv);

}  // namespace starcnn
