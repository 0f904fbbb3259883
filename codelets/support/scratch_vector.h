// A STARPU_SCRATCH vector: a task's temporary buffer, which StarPU allocates on the memory node of
// whichever worker runs the task (once per worker, kept from task to task) and never copies.
#pragma once

#include <starpu.h>

#include <cstddef>

namespace starcnn {

class ScratchVector {
 public:
  // `count` elements of `element_size` bytes; throws std::invalid_argument when count is zero or
  // beyond StarPU's 32-bit vector length.
  ScratchVector(size_t count, size_t element_size);
  // Handed back with starpu_data_unregister_submit: tasks submitted with it may still run.
  ~ScratchVector() { starpu_data_unregister_submit(handle_); }
  ScratchVector(const ScratchVector &) = delete;
  ScratchVector &operator=(const ScratchVector &) = delete;

  starpu_data_handle_t handle() const { return handle_; }

 private:
  starpu_data_handle_t handle_ = nullptr;
};

}  // namespace starcnn
