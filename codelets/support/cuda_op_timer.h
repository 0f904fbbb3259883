// Where a CUDA task's time goes, op by op (STARCNN_CUDA_OP_TIMES=1): CUDA events around each op of
// a LayerChain task, read when the task ends (which then waits for its kernels: a diagnostic, not
// a way to train), and a table per op on stderr when the worker thread exits. With
// STARCNN_CUDA_OP_TIMES=parts, the parts of a fused op (a convolution's bias, its weight and data
// gradients, its ReLU or pool) are timed inside it as well, listed under it and left out of the
// task's total. CUDA builds only.
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
  // The calling thread's timer when STARCNN_CUDA_OP_TIMES=parts, else null.
  static CudaOpTimer *for_parts();
  ~CudaOpTimer();

  // Events around the work enqueued on `stream` between begin and end, named `op`; pairs nest (a
  // part inside its op).
  void begin(const std::string &op, cudaStream_t stream);
  void end(cudaStream_t stream);
  // Events around a part of the innermost open op, named after both; false (and nothing begun)
  // where no op is open.
  bool begin_part(const char *part, cudaStream_t stream);
  // Waits for the events of this task and adds their times to the ops' totals.
  void collect();

 private:
  CudaOpTimer() = default;
  struct Pending {
    std::string op;
    cudaEvent_t start, stop;
  };
  std::vector<Pending> pending_;
  std::vector<size_t> open_;  // indices into pending_ of the ops begun and not yet ended
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

// A part of a fused op, timed under STARCNN_CUDA_OP_TIMES=parts while a TimedOp is open on this
// thread (a LayerChain's op; the layer tasks' codelets time nothing).
class TimedPart {
 public:
  TimedPart(const char *part, cudaStream_t stream);
  ~TimedPart();
  TimedPart(const TimedPart &) = delete;
  TimedPart &operator=(const TimedPart &) = delete;

 private:
  CudaOpTimer *timer_;
  cudaStream_t stream_;
};

}  // namespace starcnn
