// The machine StarPU's SimGrid mode simulates, written as a STARPU_HOME: a host's perf models
// (calibrated on a real machine) and bus files describing `gpus` GPUs and `cpus` CPU cores.
// StarPU reads the machine from HOST.platform.v4.xml (one SimGrid host per CPU core and GPU, and
// the links between them) and its transfer predictions from HOST.bandwidth and HOST.latency.
#pragma once

#include <string>

namespace starcnn {

// What the simulated machine's links come from: the calibrated machine's GPU 0.
struct CalibratedLinks {
  double to_gpu_mbps = 0, from_gpu_mbps = 0;  // RAM -> CUDA0 and CUDA0 -> RAM, MB/s
  double to_gpu_us = 0, from_gpu_us = 0;      // their latencies, microseconds
  unsigned long long gpu_memory_bytes = 0;    // CUDA0's memory
};

// GPU-to-GPU copies are staged through host memory (StarPU copies GPU -> RAM -> GPU: StarPU
// 1.3's SimGrid mode stalled on direct peer copies here), and one GPU calibrates no peer link:
// the bus matrices give them the slower direction of GPU 0's RAM links and both latencies.
struct SimulatedMachine {
  int gpus = 1, cpus = 1;
};

// The host name of the one calibration under HOME/.starpu/sampling/bus/ (HOST.bandwidth), or
// `host` when given (it must have one). Throws std::invalid_argument naming what is missing or
// which hosts there are to choose from.
std::string calibrated_host(const std::string &home, const std::string &host = "");

// GPU 0's links as HOME/.starpu/sampling/bus/HOST.{bandwidth,latency,platform.v4.xml} give them.
// Throws std::invalid_argument naming the file when one is missing or has no GPU 0.
CalibratedLinks read_calibrated_links(const std::string &home, const std::string &host);

// The bus files of `machine`, every GPU with GPU 0's links (each its own, none shared).
std::string platform_xml(const CalibratedLinks &links, const SimulatedMachine &machine);
// HOST.bandwidth (MB/s) or HOST.latency (us) between StarPU's memory nodes (0: RAM, 1 + d: CUDA
// device d), in StarPU's format: `max_nodes` rows of tab-separated values, nan where no node is.
std::string bus_matrix(const CalibratedLinks &links, const SimulatedMachine &machine, bool latency,
                       int max_nodes);

// Writes into `target` (a new STARPU_HOME) a copy of `home`'s perf models of every codelet and the
// bus files of `machine` for `host` (GPU links read only when it has GPUs). `home` is only read.
void write_simulated_home(const std::string &home, const std::string &host,
                          const SimulatedMachine &machine, const std::string &target);

}  // namespace starcnn
