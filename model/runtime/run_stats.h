// What the workers and the bus did over chosen stretches of a run, from StarPU's profiling:
// busy and idle time per worker kind, tasks executed per kind, and bytes moved between memory
// nodes (RAM to GPU, GPU to RAM, GPU to GPU). begin() starts a stretch (resetting StarPU's
// counters), end() adds it to the totals, so set-up, calibration and evaluation between
// stretches are left out.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace starcnn {

struct WorkerKindStats {
  int workers = 0;
  double executing_s = 0, total_s = 0;  // summed over the kind's workers
  uint64_t tasks = 0;

  // Fraction of the kind's worker time spent executing tasks (0 when no time was measured).
  double busy_fraction() const;
};

struct TransferStats {
  uint64_t bytes = 0, count = 0;
};

class RunStats {
 public:
  // Turns StarPU's profiling on (if it is not) and resets its worker and bus counters; waits for
  // the tasks already submitted first.
  void begin();
  // Waits for every submitted task and adds the counters since begin() to the totals.
  void end();

  // Keyed by "cpu", "cuda", ... (only the kinds that have workers).
  const std::map<std::string, WorkerKindStats> &kinds() const { return kinds_; }
  // Idle time (not executing a task) over the total time of all workers, in [0, 1].
  double idle_fraction() const;
  TransferStats ram_to_gpu() const { return ram_to_gpu_; }
  TransferStats gpu_to_ram() const { return gpu_to_ram_; }
  TransferStats gpu_to_gpu() const { return gpu_to_gpu_; }

  // {"idle_fraction": F, "workers": {"cpu": {"count": N, "busy_fraction": F, "idle_fraction": F,
  //  "tasks": N}, ...}, "bytes": {"ram_to_gpu": N, "gpu_to_ram": N, "gpu_to_gpu": N},
  //  "transfers": {...counts...}}
  std::string to_json() const;

 private:
  std::map<std::string, WorkerKindStats> kinds_;
  TransferStats ram_to_gpu_, gpu_to_ram_, gpu_to_gpu_;
};

}  // namespace starcnn
