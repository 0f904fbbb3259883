// MpiWorld of a build with StarPU-MPI. MPI is initialised here rather than by StarPU-MPI so that
// the world outlives StarPU: rank 0 can wait for every rank's trace, written at StarPU's shutdown.
#include "model/dist/mpi_rank_sum.h"
#include "model/dist/world.h"

#include <mpi.h>
#include <starpu_mpi.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace starcnn {

bool built_with_mpi() {
  return true;
}

MpiWorld::MpiWorld(int *argc, char ***argv) {
  if (!launched_by_mpirun()) return;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // StarPU-MPI calls MPI from its progress thread while the main thread may too.
  if (provided < MPI_THREAD_SERIALIZED)
    throw std::runtime_error(
        "the MPI library gives no MPI_THREAD_SERIALIZED, which StarPU-MPI needs");
}

MpiWorld::~MpiWorld() {
  if (active_) MPI_Finalize();
}

void MpiWorld::start_starpu_mpi() {
  if (!active_ || starpu_mpi_) return;
  const int ret = starpu_mpi_init_comm(nullptr, nullptr, 0, MPI_COMM_WORLD);
  if (ret != 0)
    throw std::runtime_error("StarPU-MPI failed to start (error " + std::to_string(ret) + ")");
  starpu_mpi_ = true;
}

void MpiWorld::stop_starpu_mpi() {
  if (!starpu_mpi_) return;
  starpu_mpi_shutdown();
  starpu_mpi_ = false;
}

std::unique_ptr<RankSum> MpiWorld::make_rank_sum() {
  if (!starpu_mpi_ || size_ < 2) return nullptr;
  return std::make_unique<MpiRankSum>(rank_, size_);
}

std::vector<double> MpiWorld::all_gather(double value) {
  std::vector<double> values(size_t(size_), value);
  if (active_) MPI_Allgather(&value, 1, MPI_DOUBLE, values.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  return values;
}

void MpiWorld::barrier() {
  if (active_) MPI_Barrier(MPI_COMM_WORLD);
}

void MpiWorld::abort(int status) {
  std::fflush(nullptr);
  if (active_) MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

}  // namespace starcnn
