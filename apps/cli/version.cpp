#include "apps/cli/version.h"

#include "apps/cli/version_commit.h"  // generated at every build: STARCNN_GIT_COMMIT

#include <cblas.h>
#include <dlfcn.h>
#include <starpu.h>

#ifdef STARCNN_USE_CUDA
#include <cuda_runtime_api.h>
#include <cudnn.h>
#endif

namespace starcnn {
namespace {

#ifdef STARPU_USE_FXT
constexpr const char *kLinkedVariant = "fxt";
#else
constexpr const char *kLinkedVariant = "fast";
#endif

// CUDA and cuDNN encode versions as integers: 13000 is 13.0, 91300 is 9.13.0.
std::string cuda_versions() {
#ifdef STARCNN_USE_CUDA
  int runtime = 0;
  std::string text = "cuda runtime: ";
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    text += std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  else
    text += "unknown";
  const size_t cudnn = cudnnGetVersion();
  const size_t major = cudnn >= 90000 ? cudnn / 10000 : cudnn / 1000;  // 9.x: 9xxyy, 8.x: 8xyy
  const size_t minor = cudnn >= 90000 ? cudnn % 10000 / 100 : cudnn % 1000 / 100;
  text += "\ncudnn: " + std::to_string(major) + "." + std::to_string(minor) + "." +
          std::to_string(cudnn % 100) + "\n";
  return text;
#else
  return "cuda runtime: none (built without CUDA)\ncudnn: none (built without CUDA)\n";
#endif
}

}  // namespace

bool loaded_starpu_has_fxt() {
  return dlsym(RTLD_DEFAULT, "starpu_fxt_is_enabled") != nullptr;
}

std::string version_text(const std::string &program) {
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  std::string text = program + " (starcnn) " STARCNN_VERSION "\n";
  text += "commit: " STARCNN_GIT_COMMIT "\n";
  text += "starpu: " + std::to_string(major) + "." + std::to_string(minor) + "." +
          std::to_string(release) + " " + (loaded_starpu_has_fxt() ? "fxt" : "fast") +
          " (built against " + std::to_string(STARPU_MAJOR_VERSION) + "." +
          std::to_string(STARPU_MINOR_VERSION) + "." + std::to_string(STARPU_RELEASE_VERSION) +
          " " + kLinkedVariant + ")\n";
  text += cuda_versions();
  text += std::string("openblas: ") + openblas_get_corename() + " core; " + openblas_get_config() +
          "\n";
  return text;
}

}  // namespace starcnn
