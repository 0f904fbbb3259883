// The start-up decision to restart with OPENBLAS_CORETYPE (apps/cli/blas_core.h), over a table
// of CPUs, OpenBLAS cores and environments written out by hand.
#include "apps/cli/blas_core.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace starcnn {
namespace {

constexpr const char *kDynamic = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott";
constexpr const char *kFixed = "OpenBLAS 0.3.21 NO_LAPACKE NO_AFFINITY HASWELL";

TEST(BlasCore, RestartsOnlyWhenOpenBlasChoseAWeakerCore) {
  using V = VectorIsa;
  const std::optional<std::string> unset;
  struct Case {
    V cpu;
    const char *core, *config;
    std::optional<std::string> coretype, no_fix, restarted;
    const char *expected;
  };
  const Case cases[] = {
      // The H200 host: a generic model string with AVX-512, OpenBLAS falls back to Prescott.
      {V::avx512, "Prescott", kDynamic, unset, unset, unset, "SkylakeX"},
      {V::avx512, "prescott", kDynamic, unset, unset, unset, "SkylakeX"},
      {V::avx512, "Haswell", kDynamic, unset, unset, unset, "SkylakeX"},
      {V::avx512, "Sandybridge", kDynamic, unset, unset, unset, "SkylakeX"},
      {V::avx2, "Prescott", kDynamic, unset, unset, unset, "Haswell"},
      {V::avx2, "Nehalem", kDynamic, unset, unset, unset, "Haswell"},
      {V::avx2, "Sandybridge", kDynamic, unset, unset, unset, "Haswell"},
      // OpenBLAS chose well (or better than we would).
      {V::avx512, "SkylakeX", kDynamic, unset, unset, unset, ""},
      {V::avx512, "Cooperlake", kDynamic, unset, unset, unset, ""},
      {V::avx512, "SapphireRapids", kDynamic, unset, unset, unset, ""},
      {V::avx2, "Haswell", kDynamic, unset, unset, unset, ""},
      {V::avx2, "Zen", kDynamic, unset, unset, unset, ""},
      {V::avx2, "SkylakeX", kDynamic, unset, unset, unset, ""},
      // No AVX2: no better core to ask for.
      {V::avx, "Prescott", kDynamic, unset, unset, unset, ""},
      {V::sse, "Prescott", kDynamic, unset, unset, unset, ""},
      {V::unknown, "Prescott", kDynamic, unset, unset, unset, ""},
      // A core name not in the x86 list (another architecture, a newer OpenBLAS): left alone.
      {V::avx512, "NeoverseN1", kDynamic, unset, unset, unset, ""},
      {V::avx512, "", kDynamic, unset, unset, unset, ""},
      // A build without DYNAMIC_ARCH has one core: OPENBLAS_CORETYPE changes nothing.
      {V::avx512, "Prescott", kFixed, unset, unset, unset, ""},
      // The user's OPENBLAS_CORETYPE wins, whatever it says (even empty).
      {V::avx512, "Prescott", kDynamic, std::string("Prescott"), unset, unset, ""},
      {V::avx512, "Haswell", kDynamic, std::string("Haswell"), unset, unset, ""},
      {V::avx512, "Prescott", kDynamic, std::string(""), unset, unset, ""},
      // STARCNN_NO_BLAS_CORE_FIX turns it off; empty or 0 does not.
      {V::avx512, "Prescott", kDynamic, unset, std::string("1"), unset, ""},
      {V::avx512, "Prescott", kDynamic, unset, std::string("yes"), unset, ""},
      {V::avx512, "Prescott", kDynamic, unset, std::string("0"), unset, "SkylakeX"},
      {V::avx512, "Prescott", kDynamic, unset, std::string(""), unset, "SkylakeX"},
      // Already restarted once: never again, even when OpenBLAS ignored the setting.
      {V::avx512, "Prescott", kDynamic, unset, unset, std::string("Prescott"), ""},
  };
  for (const Case &c : cases) {
    const BlasCoreSituation situation{c.cpu, c.core, c.config, c.coretype, c.no_fix, c.restarted};
    EXPECT_EQ(blas_core_to_restart_with(situation), c.expected)
        << "cpu " << to_string(c.cpu) << ", core '" << c.core << "', config '" << c.config
        << "', OPENBLAS_CORETYPE " << c.coretype.value_or("(unset)")
        << ", STARCNN_NO_BLAS_CORE_FIX " << c.no_fix.value_or("(unset)") << ", restarted "
        << c.restarted.value_or("(no)");
  }
}

TEST(BlasCore, CoreNamesByTheirInstructions) {
  EXPECT_EQ(blas_core_isa("SkylakeX"), VectorIsa::avx512);
  EXPECT_EQ(blas_core_isa("HASWELL"), VectorIsa::avx2);
  EXPECT_EQ(blas_core_isa("Sandybridge"), VectorIsa::avx);
  EXPECT_EQ(blas_core_isa("Prescott"), VectorIsa::sse);
  EXPECT_EQ(blas_core_isa("Core2"), VectorIsa::sse);
  EXPECT_EQ(blas_core_isa("armv8"), VectorIsa::unknown);
}

// This CPU's instructions against the kernel's own list of them (/proc/cpuinfo's flags).
TEST(BlasCore, CpuInstructionsMatchProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string word; words >> word;) flags.insert(word);
      break;
    }
  if (flags.empty()) GTEST_SKIP() << "no flags in /proc/cpuinfo (not an x86 Linux)";
  const auto has = [&](const char *f) { return flags.count(f) > 0; };
  VectorIsa expected = VectorIsa::sse;
  if (has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl"))
    expected = VectorIsa::avx512;
  else if (has("avx2") && has("fma"))
    expected = VectorIsa::avx2;
  else if (has("avx"))
    expected = VectorIsa::avx;
  EXPECT_EQ(cpu_vector_isa(), expected);
}

}  // namespace
}  // namespace starcnn
