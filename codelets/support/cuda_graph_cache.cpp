#include "codelets/support/cuda_graph_cache.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace starcnn {
namespace {
std::atomic<uint64_t> captures{0}, replays{0};
}  // namespace

uint64_t cuda_graph_captures() {
  return captures.load();
}
uint64_t cuda_graph_replays() {
  return replays.load();
}

CudaGraphCache::~CudaGraphCache() {
  // At the worker thread's exit StarPU may already have let the device go: errors are ignored.
  for (Entry &e : entries_)
    if (e.graph) cudaGraphExecDestroy(e.graph);
}

CudaGraphCache::Entry &CudaGraphCache::entry_for(const std::vector<uint64_t> &key) {
  ++clock_;
  for (Entry &e : entries_)
    if (e.key == key) {
      e.last_use = clock_;
      return e;
    }
  if (entries_.size() == kCudaGraphsPerWorker) {
    auto oldest =
        std::min_element(entries_.begin(), entries_.end(),
                         [](const Entry &a, const Entry &b) { return a.last_use < b.last_use; });
    if (oldest->graph) cudaGraphExecDestroy(oldest->graph);
    entries_.erase(oldest);
  }
  entries_.push_back({key, nullptr, clock_, false});
  return entries_.back();
}

bool CudaGraphCache::capture(Entry &entry, cudaStream_t stream,
                             const std::function<void()> &launch) {
  // Thread-local mode: StarPU's other threads may call CUDA while this one captures.
  cudaError_t status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  cudaGraph_t graph = nullptr;
  if (status == cudaSuccess) {
    launch();
    status = cudaStreamEndCapture(stream, &graph);
  }
  if (status == cudaSuccess) status = cudaGraphInstantiate(&entry.graph, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  if (status == cudaSuccess) {
    ++captures;
    return true;
  }
  cudaGetLastError();  // the failed capture's error is reported here, not by the next kernel
  entry.graph = nullptr;
  std::fprintf(stderr,
               "starcnn: capturing a CUDA task's kernels as a graph failed (%s); they are "
               "launched one by one from now on\n",
               cudaGetErrorString(status));
  return false;
}

void CudaGraphCache::run(const std::vector<uint64_t> &key, cudaStream_t stream,
                         const std::function<void()> &launch) {
  if (failed_) {
    launch();
    return;
  }
  Entry &entry = entry_for(key);
  if (!entry.graph && !entry.seen) {
    entry.seen = true;
    launch();
    return;
  }
  if (!entry.graph && !capture(entry, stream, launch)) {
    failed_ = true;
    launch();  // the capture ran nothing
    return;
  }
  const cudaError_t status = cudaGraphLaunch(entry.graph, stream);
  if (status != cudaSuccess) {
    cudaGetLastError();
    std::fprintf(stderr,
                 "starcnn: launching a captured CUDA graph failed (%s); launching its "
                 "kernels one by one from now on\n",
                 cudaGetErrorString(status));
    failed_ = true;
    launch();
    return;
  }
  ++replays;
}

}  // namespace starcnn
