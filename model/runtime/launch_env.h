// How this process was launched, read from the environment.
#pragma once

namespace starcnn {

// True when the environment says a launcher such as mpirun started this process (Open MPI's
// OMPI_COMM_WORLD_SIZE, or PMIX_RANK / PMI_RANK of other launchers).
bool launched_by_mpirun();

}  // namespace starcnn
