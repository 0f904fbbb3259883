// The processes of a data-parallel run. Launched by mpirun (Open MPI's OMPI_COMM_WORLD_SIZE, or
// PMIX_RANK / PMI_RANK of other launchers), the program is one rank of an MPI world; otherwise it
// is alone and MPI is never initialised, so a single process needs no MPI at run time.
#pragma once

#include "model/dist/rank_sum.h"
#include "model/runtime/launch_env.h"  // launched_by_mpirun

#include <memory>
#include <vector>

namespace starcnn {

// True when starcnn was built with StarPU-MPI (CMake found starpumpi-1.3 and MPI).
bool built_with_mpi();

class MpiWorld {
 public:
  // Initialises MPI when launched_by_mpirun(); throws std::runtime_error when it is but starcnn
  // was built without StarPU-MPI. Call before StarPU starts.
  MpiWorld(int *argc, char ***argv);
  // Finalises MPI (after StarPU-MPI and StarPU have stopped).
  ~MpiWorld();
  MpiWorld(const MpiWorld &) = delete;
  MpiWorld &operator=(const MpiWorld &) = delete;

  bool active() const { return active_; }  // MPI initialised
  int rank() const { return rank_; }
  int size() const { return size_; }

  // StarPU-MPI on top of the running StarPU (call after starpu_init, and stop before
  // starpu_shutdown); no-ops when not active.
  void start_starpu_mpi();
  void stop_starpu_mpi();
  // The cross-rank sum over StarPU-MPI; null when not active or alone.
  std::unique_ptr<RankSum> make_rank_sum();

  // Every rank's `value`, in rank order (waits for all ranks). {value} when not active.
  std::vector<double> all_gather(double value);
  void barrier();
  // Ends every rank of the world with `status` (MPI_Abort); exits when not active.
  [[noreturn]] void abort(int status);

 private:
  bool active_ = false, starpu_mpi_ = false;
  int rank_ = 0, size_ = 1;
};

// StarPU-MPI for a scope: started after the Runtime, stopped before it.
class StarpuMpiScope {
 public:
  explicit StarpuMpiScope(MpiWorld &world) : world_(world) { world_.start_starpu_mpi(); }
  ~StarpuMpiScope() { world_.stop_starpu_mpi(); }
  StarpuMpiScope(const StarpuMpiScope &) = delete;
  StarpuMpiScope &operator=(const StarpuMpiScope &) = delete;

 private:
  MpiWorld &world_;
};

}  // namespace starcnn
