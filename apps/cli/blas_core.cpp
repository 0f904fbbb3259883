#include "apps/cli/blas_core.h"

#include "apps/cli/restart.h"

#include <cblas.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace starcnn {
namespace {

std::optional<std::string> env(const char *name) {
  const char *value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

std::string current_core() {
  const char *name = openblas_get_corename();
  return name ? name : "";
}

}  // namespace

const char *to_string(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::avx512:
      return "AVX-512";
    case VectorIsa::avx2:
      return "AVX2";
    case VectorIsa::avx:
      return "AVX";
    case VectorIsa::sse:
      return "SSE";
    case VectorIsa::unknown:
      break;
  }
  return "unknown";
}

VectorIsa cpu_vector_isa() {
#if defined(__x86_64__) || defined(__i386__)
  // GCC's and clang's checks include the OS's support (XGETBV) for the AVX and AVX-512 registers.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return VectorIsa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::avx2;
  if (__builtin_cpu_supports("avx")) return VectorIsa::avx;
  return VectorIsa::sse;
#else
  return VectorIsa::unknown;
#endif
}

VectorIsa blas_core_isa(const std::string &core) {
  // The x86 cores of OpenBLAS's DYNAMIC_ARCH builds, by the widest instructions of their kernels.
  static const std::vector<std::pair<VectorIsa, std::vector<std::string>>> cores = {
      {VectorIsa::avx512, {"skylakex", "cooperlake", "sapphirerapids"}},
      {VectorIsa::avx2, {"haswell", "zen", "excavator"}},
      {VectorIsa::avx, {"sandybridge", "bulldozer", "piledriver", "steamroller"}},
      {VectorIsa::sse,
       {"prescott", "katmai", "coppermine", "northwood", "banias", "atom", "core2", "penryn",
        "dunnington", "nehalem", "athlon", "opteron", "opteron_sse3", "barcelona", "nano",
        "bobcat"}},
  };
  const std::string name = lower(core);
  for (const auto &[isa, names] : cores)
    if (std::find(names.begin(), names.end(), name) != names.end()) return isa;
  return VectorIsa::unknown;
}

std::string blas_core_to_restart_with(const BlasCoreSituation &s) {
  if (s.restarted || s.coretype) return "";
  if (s.no_fix && !s.no_fix->empty() && *s.no_fix != "0") return "";
  if (s.config.find("DYNAMIC_ARCH") == std::string::npos) return "";
  const VectorIsa core = blas_core_isa(s.core);
  if (core == VectorIsa::unknown || core >= s.cpu) return "";
  if (s.cpu == VectorIsa::avx512) return "SkylakeX";
  if (s.cpu == VectorIsa::avx2) return "Haswell";
  return "";  // no better core for an AVX-only CPU than the one it has
}

void fix_blas_core(const char *program, char **argv) {
  if (const std::optional<std::string> before = env(kBlasCoreRestarted)) {
    const std::string now = current_core();
    std::fprintf(stderr,
                 "%s: OpenBLAS chose its %s kernels on this %s CPU: restarted with "
                 "OPENBLAS_CORETYPE=%s, %s %s (STARCNN_NO_BLAS_CORE_FIX=1 keeps OpenBLAS's "
                 "choice)\n",
                 program, before->c_str(), to_string(cpu_vector_isa()),
                 env("OPENBLAS_CORETYPE").value_or("").c_str(),
                 lower(now) == lower(*before) ? "yet it still uses" : "now", now.c_str());
    // Gone, so that a later restart (--trace) or a child process says nothing again.
    unsetenv(kBlasCoreRestarted);
    return;
  }
  const char *config = openblas_get_config();
  const BlasCoreSituation situation{cpu_vector_isa(),
                                    current_core(),
                                    config ? config : "",
                                    env("OPENBLAS_CORETYPE"),
                                    env("STARCNN_NO_BLAS_CORE_FIX"),
                                    std::nullopt};
  const std::string coretype = blas_core_to_restart_with(situation);
  if (coretype.empty()) return;
  setenv("OPENBLAS_CORETYPE", coretype.c_str(), 1);
  setenv(kBlasCoreRestarted, situation.core.c_str(), 1);
  const std::string error = restart_self(argv);
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kBlasCoreRestarted);
  std::fprintf(stderr,
               "%s: warning: OpenBLAS chose its %s kernels on this %s CPU, and restarting with "
               "OPENBLAS_CORETYPE=%s failed (%s): the CPU kernels run slower\n",
               program, situation.core.c_str(), to_string(situation.cpu), coretype.c_str(),
               error.c_str());
}

}  // namespace starcnn
