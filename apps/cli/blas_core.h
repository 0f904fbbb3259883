// OpenBLAS's choice of kernels, put right at start-up. A DYNAMIC_ARCH OpenBLAS picks its core
// from the CPU model when it is loaded; on a CPU it does not recognise (a VM's generic "Intel(R)
// Xeon(R) Processor" with AVX-512) it falls back to generic SSE kernels ("Prescott"), several
// times slower. OPENBLAS_CORETYPE chooses the core instead, but only before the library loads: so
// the program restarts itself once with it set (apps/cli/restart.h).
#pragma once

#include <optional>
#include <string>

namespace starcnn {

// The widest vector instructions a CPU (and its OS) can run, as OpenBLAS's kernels need them:
// avx512 is AVX-512 F/BW/DQ/VL (SkylakeX kernels), avx2 is AVX2 with FMA (Haswell kernels).
enum class VectorIsa { unknown, sse, avx, avx2, avx512 };

const char *to_string(VectorIsa isa);  // "AVX-512", "AVX2", "AVX", "SSE", "unknown"
// This CPU's (x86 only; unknown elsewhere).
VectorIsa cpu_vector_isa();
// The instructions an OpenBLAS core's kernels use ("Prescott": sse, "SkylakeX": avx512; names
// compared without case); unknown for a name not in its x86 list.
VectorIsa blas_core_isa(const std::string &core);

// Everything the decision reads; the std::optional ones are environment variables (unset:
// nullopt).
struct BlasCoreSituation {
  VectorIsa cpu = VectorIsa::unknown;
  std::string core;    // openblas_get_corename()
  std::string config;  // openblas_get_config(): only a DYNAMIC_ARCH build can change its core
  std::optional<std::string> coretype;   // OPENBLAS_CORETYPE: the user's choice always wins
  std::optional<std::string> no_fix;     // STARCNN_NO_BLAS_CORE_FIX: set (not "0") turns it off
  std::optional<std::string> restarted;  // kBlasCoreRestarted: this process is the restart
};

// Set in the restarted process, holding the core OpenBLAS had chosen before.
constexpr const char *kBlasCoreRestarted = "STARCNN_BLAS_CORE_RESTARTED_FROM";

// The OPENBLAS_CORETYPE to restart with ("SkylakeX" on an AVX-512 CPU, "Haswell" on an AVX2 one)
// when OpenBLAS chose a core weaker than the CPU, or "" to go on as is.
std::string blas_core_to_restart_with(const BlasCoreSituation &situation);

// Call first in main, before anything else starts: when blas_core_to_restart_with says so,
// restarts the program with OPENBLAS_CORETYPE set (returning only when that fails, after a
// warning); in the restarted process, says on stderr which core OpenBLAS now uses.
void fix_blas_core(const char *program, char **argv);

}  // namespace starcnn
