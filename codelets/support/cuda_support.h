// Helpers for CUDA launchers: grid sizing and launch-error reporting. No synchronisation here:
// launchers run inside StarPU tasks on the worker's stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace starcnn {

constexpr int kThreadsPerBlock = 256;

// Enough blocks to cover n elements with a grid-stride loop, capped to keep launches cheap.
inline unsigned grid_for(size_t n) {
  const size_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const size_t cap = 65535;
  return static_cast<unsigned>(blocks == 0 ? 1 : (blocks < cap ? blocks : cap));
}

// Aborts through StarPU's reporter if the last launch failed: a broken kernel must not pass
// silently.
void check_launch(const char *kernel);

}  // namespace starcnn
