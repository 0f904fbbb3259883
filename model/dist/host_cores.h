// Ranks sharing one host. StarPU binds its workers from core 0 up in every process, so ranks
// started on one host by mpirun would all put their workers on the same cores: on the H200 host
// two ranks of 3 CPU workers each trained lenet 22x slower than one process. Each rank therefore
// gets its own block of the host's cores, with room left for the threads StarPU does not count as
// workers (the rank's main thread and StarPU-MPI's progress thread).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace starcnn {

struct HostCores {
  std::vector<int> cpus;         // the rank's block of cores, for STARPU_WORKERS_CPUID
  int cpu_workers = 0;           // for STARPU_NCPU
  std::string describe() const;  // "cores 8-15, 6 CPU workers"
};

// The block of local rank `local_rank` among `local_size` ranks on a host of `cores` cores, when
// the rank has a CUDA worker or not (its thread takes a core). Empty for a rank alone on its host.
std::optional<HostCores> host_cores(int local_rank, int local_size, int cores, bool cuda_worker);

// Under mpirun with several ranks on this host (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK and
// _LOCAL_SIZE), sets STARPU_WORKERS_CPUID and STARPU_NCPU to this rank's block, unless the user
// set either (or STARPU_NCPUS). Call before StarPU starts. Returns what it set, or nothing.
std::optional<HostCores> place_rank_on_host_cores();

}  // namespace starcnn
