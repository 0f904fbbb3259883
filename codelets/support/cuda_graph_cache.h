// A CUDA task's kernels replayed as one CUDA graph. Launching a training step's ~40 cuDNN, cuBLAS
// and starcnn kernels one by one costs the CUDA worker's thread more than the H200 takes to run
// them at small batches; a graph captured once is launched in one call. CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace starcnn {

// One per CUDA worker thread (thread_local): graphs are captured and launched on the worker's own
// StarPU stream, and only that thread touches them.
class CudaGraphCache {
 public:
  CudaGraphCache() = default;
  ~CudaGraphCache();
  CudaGraphCache(const CudaGraphCache &) = delete;
  CudaGraphCache &operator=(const CudaGraphCache &) = delete;

  // Enqueues `launch`'s work on `stream`: the first time `key` is seen, by calling it (libraries
  // set themselves up outside a capture); the second time, by capturing it into a graph and
  // launching that; afterwards by launching the graph alone. `key` must name everything the
  // kernels depend on (the buffers' device addresses, the shapes). Where the capture fails, says so
  // once on stderr and calls `launch` from then on.
  void run(const std::vector<uint64_t> &key, cudaStream_t stream,
           const std::function<void()> &launch);

 private:
  struct Entry {
    std::vector<uint64_t> key;
    cudaGraphExec_t graph = nullptr;  // null: not captured yet
    uint64_t last_use = 0;
    bool seen = false;  // launched once without a graph
  };
  Entry &entry_for(const std::vector<uint64_t> &key);
  bool capture(Entry &entry, cudaStream_t stream, const std::function<void()> &launch);

  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  bool failed_ = false;
};

// Graphs captured, and launches of a captured graph, by every cache of the process so far (what
// the tests and benchmarks check graphs were used by).
uint64_t cuda_graph_captures();
uint64_t cuda_graph_replays();

// The graphs a process keeps per CUDA worker: buffers move between steps only when StarPU evicts
// them, and a step alternates between two batch slots.
constexpr size_t kCudaGraphsPerWorker = 8;

}  // namespace starcnn
