#include "codelets/support/cuda_op_timer.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace starcnn {

namespace {

std::string op_times_setting() {
  const char *value = std::getenv("STARCNN_CUDA_OP_TIMES");
  return value == nullptr ? "0" : value;
}

// A part's name: its op's, this separator, the part's.
constexpr char kPartSeparator = '\x1f';

bool is_part(const std::string &op) {
  return op.find(kPartSeparator) != std::string::npos;
}

}  // namespace

CudaOpTimer *CudaOpTimer::for_this_thread() {
  static const bool enabled = op_times_setting() != "0";
  if (!enabled) return nullptr;
  thread_local std::unique_ptr<CudaOpTimer> timer(new CudaOpTimer);
  return timer.get();
}

CudaOpTimer *CudaOpTimer::for_parts() {
  static const bool enabled = op_times_setting() == "parts";
  return enabled ? for_this_thread() : nullptr;
}

void CudaOpTimer::begin(const std::string &op, cudaStream_t stream) {
  Pending p{op, nullptr, nullptr};
  cudaEventCreate(&p.start);
  cudaEventCreate(&p.stop);
  cudaEventRecord(p.start, stream);
  open_.push_back(pending_.size());
  pending_.push_back(p);
}

bool CudaOpTimer::begin_part(const char *part, cudaStream_t stream) {
  if (open_.empty()) return false;
  begin(pending_[open_.back()].op + kPartSeparator + part, stream);
  return true;
}

void CudaOpTimer::end(cudaStream_t stream) {
  cudaEventRecord(pending_[open_.back()].stop, stream);
  open_.pop_back();
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
  for (const auto &[op, t] : totals_)
    if (!is_part(op)) all += t.first / double(t.second);
  std::fprintf(stderr,
               "starcnn: CUDA op times of this worker (ms per call, mean; %.3f ms a task)\n", all);
  for (const std::string &op : order_) {
    const auto &[ms, calls] = totals_.at(op);
    const std::string name = is_part(op) ? "  . " + op.substr(op.find(kPartSeparator) + 1) : op;
    std::fprintf(stderr, "  %-44s %9.4f  %5.1f%%  (%ld calls)\n", name.c_str(), ms / double(calls),
                 100.0 * ms / double(calls) / all, calls);
  }
}

TimedPart::TimedPart(const char *part, cudaStream_t stream)
    : timer_(CudaOpTimer::for_parts()), stream_(stream) {
  if (timer_ && !timer_->begin_part(part, stream_)) timer_ = nullptr;
}

TimedPart::~TimedPart() {
  if (timer_) timer_->end(stream_);
}

}  // namespace starcnn
