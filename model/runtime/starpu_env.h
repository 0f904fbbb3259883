// StarPU's environment checked before StarPU starts: StarPU aborts (SIGABRT) on a malformed
// STARPU_NCPU or STARPU_NCUDA, and an unknown STARPU_SCHED only gets a warning and a fallback.
#pragma once

#include <stdexcept>
#include <string>

namespace starcnn {

// Throws std::invalid_argument naming the variable when STARPU_NCPU, STARPU_NCUDA (or another
// worker count StarPU reads as a number) is not a whole number >= -1, or STARPU_SCHED is not one
// of the policies this StarPU offers (listed in the message).
void check_starpu_environment();

// The names of the scheduling policies this StarPU offers, comma-separated.
std::string starpu_policy_names();

}  // namespace starcnn
