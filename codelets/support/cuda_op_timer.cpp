#include "codelets/support/cuda_op_timer.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace starcnn {

CudaOpTimer *CudaOpTimer::for_this_thread() {
  static const bool enabled = [] {
    const char *value = std::getenv("STARCNN_CUDA_OP_TIMES");
    return value != nullptr && std::string(value) != "0";
  }();
  if (!enabled) return nullptr;
  thread_local std::unique_ptr<CudaOpTimer> timer(new CudaOpTimer);
  return timer.get();
}

void CudaOpTimer::begin(const std::string &op, cudaStream_t stream) {
  Pending p{op, nullptr, nullptr};
  cudaEventCreate(&p.start);
  cudaEventCreate(&p.stop);
  cudaEventRecord(p.start, stream);
  pending_.push_back(p);
}

void CudaOpTimer::end(cudaStream_t stream) {
  cudaEventRecord(pending_.back().stop, stream);
}

void CudaOpTimer::collect() {
  for (Pending &p : pending_) {
    float ms = 0;
    cudaEventSynchronize(p.stop);
    cudaEventElapsedTime(&ms, p.start, p.stop);
    cudaEventDestroy(p.start);
    cudaEventDestroy(p.stop);
    auto [it, added] = totals_.try_emplace(p.op, 0.0, 0L);
    if (added) order_.push_back(p.op);
    it->second.first += ms;
    ++it->second.second;
  }
  pending_.clear();
}

CudaOpTimer::~CudaOpTimer() {
  if (totals_.empty()) return;
  double all = 0;
  for (const auto &[op, t] : totals_) all += t.first / double(t.second);
  std::fprintf(stderr,
               "starcnn: CUDA op times of this worker (ms per call, mean; %.3f ms a task)\n", all);
  for (const std::string &op : order_) {
    const auto &[ms, calls] = totals_.at(op);
    std::fprintf(stderr, "  %-44s %9.4f  %5.1f%%  (%ld calls)\n", op.c_str(), ms / double(calls),
                 100.0 * ms / double(calls) / all, calls);
  }
}

}  // namespace starcnn
