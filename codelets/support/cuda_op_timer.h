// Where a CUDA task's time goes, op by op (STARCNN_CUDA_OP_TIMES=1): CUDA events around each op of
// a LayerChain task, read when the task ends (which then waits for its kernels: a diagnostic, not
// a way to train), and a table per op on stderr when the worker thread exits. CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace starcnn {

class CudaOpTimer {
 public:
  // The calling thread's timer when STARCNN_CUDA_OP_TIMES is set (and not 0), else null.
  static CudaOpTimer *for_this_thread();
  ~CudaOpTimer();

  // Events around the work enqueued on `stream` between begin and end, named `op`.
  void begin(const std::string &op, cudaStream_t stream);
  void end(cudaStream_t stream);
  // Waits for the events of this task and adds their times to the ops' totals.
  void collect();

 private:
  CudaOpTimer() = default;
  struct Pending {
    std::string op;
    cudaEvent_t start, stop;
  };
  std::vector<Pending> pending_;
  std::map<std::string, std::pair<double, long>> totals_;  // op -> (ms, calls), in op order
  std::vector<std::string> order_;
};

// Times one op on a timer that may be null; `name()` makes its name only when timing.
class TimedOp {
 public:
  template <typename Name>
  TimedOp(CudaOpTimer *timer, Name name, cudaStream_t stream) : timer_(timer), stream_(stream) {
    if (timer_) timer_->begin(name(), stream_);
  }
  ~TimedOp() {
    if (timer_) timer_->end(stream_);
  }
  TimedOp(const TimedOp &) = delete;
  TimedOp &operator=(const TimedOp &) = delete;

 private:
  CudaOpTimer *timer_;
  cudaStream_t stream_;
};

}  // namespace starcnn
