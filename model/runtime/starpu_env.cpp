#include "model/runtime/starpu_env.h"

#include <starpu.h>

#include <cstdlib>
#include <cstring>

namespace starcnn {

namespace {

// Worker counts StarPU reads with starpu_get_env_number (which aborts on anything but a number).
const char *const worker_count_variables[] = {"STARPU_NCPU", "STARPU_NCPUS", "STARPU_NCUDA",
                                              "STARPU_NOPENCL", "STARPU_NWORKER_PER_CUDA"};

// More workers than any machine has: beyond this a value is a typo.
constexpr long max_workers = 1 << 16;

void check_worker_count(const char *name) {
  const char *value = std::getenv(name);
  if (!value) return;
  const std::string text = value;
  const size_t digits_from = !text.empty() && text[0] == '-' ? 1 : 0;
  const bool number = text.size() > digits_from && text.size() <= 7 &&
                      text.find_first_not_of("0123456789", digits_from) == std::string::npos;
  const long n = number ? std::strtol(value, nullptr, 10) : 0;
  if (!number || n < -1 || n > max_workers)
    throw std::invalid_argument(std::string(name) + " must be a whole number from -1 (StarPU's " +
                                "choice) to " + std::to_string(max_workers) + ", got '" + text +
                                "'");
}

}  // namespace

std::string starpu_policy_names() {
  std::string names;
  for (starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; ++p)
    if ((*p)->policy_name) names += (names.empty() ? "" : ", ") + std::string((*p)->policy_name);
  return names;
}

void check_starpu_environment() {
  for (const char *name : worker_count_variables) check_worker_count(name);
  const char *sched = std::getenv("STARPU_SCHED");
  if (!sched) return;
  for (starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; ++p)
    if ((*p)->policy_name && std::strcmp((*p)->policy_name, sched) == 0) return;
  const std::string version = std::to_string(STARPU_MAJOR_VERSION) + "." +
                              std::to_string(STARPU_MINOR_VERSION) + "." +
                              std::to_string(STARPU_RELEASE_VERSION);
  throw std::invalid_argument("STARPU_SCHED '" + std::string(sched) +
                              "' is not a scheduling policy of StarPU " + version +
                              "; it offers: " + starpu_policy_names());
}

}  // namespace starcnn
