#include "model/runtime/launch_env.h"

#include <cstdlib>
#include <initializer_list>

namespace starcnn {

bool launched_by_mpirun() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

}  // namespace starcnn
