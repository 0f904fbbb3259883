#include "codelets/support/scratch_vector.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace starcnn {

ScratchVector::ScratchVector(size_t count, size_t element_size) {
  if (count == 0 || count > UINT32_MAX)
    throw std::invalid_argument("a scratch vector of " + std::to_string(count) + " elements");
  // Home node -1: no copy in RAM, StarPU allocates one where the task runs.
  starpu_vector_data_register(&handle_, -1, 0, static_cast<uint32_t>(count), element_size);
}

}  // namespace starcnn
