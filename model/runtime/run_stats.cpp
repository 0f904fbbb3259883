#include "model/runtime/run_stats.h"

#include "model/io/json.h"

#include <starpu.h>

#include <algorithm>
#include <cstdio>

namespace starcnn {
namespace {

double seconds(const timespec &t) {
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

std::string kind_name(starpu_worker_archtype type) {
  switch (type) {
    case STARPU_CPU_WORKER:
      return "cpu";
    case STARPU_CUDA_WORKER:
      return "cuda";
    case STARPU_OPENCL_WORKER:
      return "opencl";
    default:
      return "other";
  }
}

bool is_gpu(unsigned node) {
  const starpu_node_kind kind = starpu_node_get_kind(node);
  return kind == STARPU_CUDA_RAM || kind == STARPU_OPENCL_RAM;
}

}  // namespace

double WorkerKindStats::busy_fraction() const {
  return total_s > 0 ? std::min(1.0, executing_s / total_s) : 0.0;
}

void RunStats::begin() {
  starpu_task_wait_for_all();
  // Enabling resets every counter; when profiling is already on, reset them one by one (the
  // getters reset what they read; a null info only resets).
  if (starpu_profiling_status_get() != STARPU_PROFILING_ENABLE) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    return;
  }
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    starpu_profiling_worker_get_info(int(w), nullptr);
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus)
    starpu_bus_get_profiling_info(bus, nullptr);
}

void RunStats::end() {
  starpu_task_wait_for_all();
  std::map<std::string, int> workers;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    starpu_profiling_worker_info info{};
    starpu_profiling_worker_get_info(int(w), &info);
    const std::string name = kind_name(starpu_worker_get_type(int(w)));
    WorkerKindStats &kind = kinds_[name];
    kind.executing_s += seconds(info.executing_time);
    kind.total_s += seconds(info.total_time);
    kind.tasks += uint64_t(info.executed_tasks);
    ++workers[name];
  }
  for (const auto &[name, count] : workers) kinds_[name].workers = count;
  for (int bus = 0; bus < starpu_bus_get_count(); ++bus) {
    starpu_profiling_bus_info info{};
    starpu_bus_get_profiling_info(bus, &info);
    const bool from_gpu = is_gpu(unsigned(starpu_bus_get_src(bus)));
    const bool to_gpu = is_gpu(unsigned(starpu_bus_get_dst(bus)));
    TransferStats *total = from_gpu && to_gpu ? &gpu_to_gpu_
                           : to_gpu           ? &ram_to_gpu_
                           : from_gpu         ? &gpu_to_ram_
                                              : nullptr;  // RAM to RAM (NUMA nodes)
    if (!total) continue;
    total->bytes += uint64_t(info.transferred_bytes);
    total->count += uint64_t(info.transfer_count);
  }
}

double RunStats::idle_fraction() const {
  double executing = 0, total = 0;
  for (const auto &[name, kind] : kinds_) {
    executing += kind.executing_s;
    total += kind.total_s;
  }
  return total > 0 ? 1.0 - std::min(1.0, executing / total) : 0.0;
}

std::string RunStats::to_json() const {
  json::Object workers;
  for (const auto &[name, kind] : kinds_) {
    workers.object(name, json::Object()
                             .integer("count", kind.workers)
                             .fixed("busy_fraction", kind.busy_fraction(), 6)
                             .fixed("idle_fraction", 1.0 - kind.busy_fraction(), 6)
                             .integer("tasks", kind.tasks));
  }
  auto per_direction = [&](uint64_t TransferStats::*field) {
    return json::Object()
        .integer("ram_to_gpu", ram_to_gpu_.*field)
        .integer("gpu_to_ram", gpu_to_ram_.*field)
        .integer("gpu_to_gpu", gpu_to_gpu_.*field);
  };
  return json::Object()
      .fixed("idle_fraction", idle_fraction(), 6)
      .object("workers", workers)
      .object("bytes", per_direction(&TransferStats::bytes))
      .object("transfers", per_direction(&TransferStats::count))
      .text();
}

}  // namespace starcnn
