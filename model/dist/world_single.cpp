// MpiWorld of a build without StarPU-MPI: one process, and a clear error under mpirun.
#include "model/dist/world.h"

#include <cstdlib>
#include <stdexcept>

namespace starcnn {

bool built_with_mpi() {
  return false;
}

MpiWorld::MpiWorld(int *, char ***) {
  if (launched_by_mpirun())
    throw std::runtime_error(
        "launched by mpirun, but starcnn was built without StarPU-MPI (CMake did not find "
        "starpumpi-1.3 and MPI): rebuild after scripts/setup-deps, or run a single process");
}

MpiWorld::~MpiWorld() = default;
void MpiWorld::start_starpu_mpi() {}
void MpiWorld::stop_starpu_mpi() {}
std::unique_ptr<RankSum> MpiWorld::make_rank_sum() {
  return nullptr;
}
std::vector<double> MpiWorld::all_gather(double value) {
  return {value};
}
void MpiWorld::barrier() {}
void MpiWorld::abort(int status) {
  std::exit(status);
}

}  // namespace starcnn
