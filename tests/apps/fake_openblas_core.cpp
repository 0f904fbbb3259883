// A stand-in for OpenBLAS's two self-description calls, LD_PRELOADed by blas_core_test.sh: it
// answers as a DYNAMIC_ARCH OpenBLAS that fell back to its generic "Prescott" kernels, and that
// takes OPENBLAS_CORETYPE when set (unless FAKE_OPENBLAS_IGNORES_CORETYPE is set, as a build
// without DYNAMIC_ARCH would).
#include <cstdlib>

extern "C" char *openblas_get_corename(void) {
  static char prescott[] = "Prescott";
  char *coretype = std::getenv("OPENBLAS_CORETYPE");
  if (coretype && *coretype && !std::getenv("FAKE_OPENBLAS_IGNORES_CORETYPE")) return coretype;
  return prescott;
}

extern "C" char *openblas_get_config(void) {
  static char config[] = "OpenBLAS (stand-in) DYNAMIC_ARCH";
  return config;
}
