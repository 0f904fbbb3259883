#include "model/dist/host_cores.h"

#include "codelets/support/codelet_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace starcnn {

std::string HostCores::describe() const {
  std::string text = "cores " + std::to_string(cpus.front());
  if (cpus.size() > 1) text += "-" + std::to_string(cpus.back());
  return text + ", " + std::to_string(cpu_workers) + " CPU worker" + (cpu_workers == 1 ? "" : "s");
}

std::optional<HostCores> host_cores(int local_rank, int local_size, int cores, bool cuda_worker) {
  if (local_size <= 1 || local_rank < 0 || local_rank >= local_size || cores < 1) return {};
  HostCores placed;
  if (cores < local_size) {
    // More ranks than cores: each takes one core, shared round robin.
    placed.cpus = {local_rank % cores};
    placed.cpu_workers = 1;
    return placed;
  }
  const int block = cores / local_size;
  for (int c = 0; c < block; ++c) placed.cpus.push_back(local_rank * block + c);
  // The main thread and StarPU-MPI's progress thread keep busy too; a CUDA worker's thread as well.
  placed.cpu_workers = std::max(1, block - 2 - (cuda_worker ? 1 : 0));
  return placed;
}

namespace {
int env_int(const char *name, int fallback) {
  const char *value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char *end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  return *end == '\0' ? int(parsed) : fallback;
}
}  // namespace

std::optional<HostCores> place_rank_on_host_cores() {
  for (const char *name : {"STARPU_WORKERS_CPUID", "STARPU_NCPU", "STARPU_NCPUS"})
    if (std::getenv(name) != nullptr) return {};
  const std::optional<HostCores> placed = host_cores(
      env_int("OMPI_COMM_WORLD_LOCAL_RANK", -1), env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1),
      int(std::thread::hardware_concurrency()), cuda_devices_for_starpu() > 0);
  if (!placed) return {};
  std::string list;
  for (int cpu : placed->cpus) list += (list.empty() ? "" : " ") + std::to_string(cpu);
  setenv("STARPU_WORKERS_CPUID", list.c_str(), 1);
  setenv("STARPU_NCPU", std::to_string(placed->cpu_workers).c_str(), 1);
  return placed;
}

}  // namespace starcnn
