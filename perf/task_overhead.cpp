// Measures StarPU's own cost per task on this machine: the part of a step that the perf models do
// not hold (they time a codelet's function alone), so that the SimGrid simulation can charge it
// (perf/simulate --overheads). With empty tasks, the workers running (idle ones poll, as in a
// step) and the tasks held back by a handle the main thread holds:
//   submit_us      the submitting thread's time per task (starpu_task_insert of a task on a handle
//                  of its own, waiting for the held one);
//   cpu_chain_us   per task of a chain of dependent tasks on the CPU workers, from the release of
//                  the held handle to the end of the last: the dependency release, push, pop,
//                  wake-up and the driver's work around the function;
//   cuda_chain_us  the same on the CUDA workers (where there are any).
// Medians over --rounds. One JSON line on stdout, a table on stderr.
#include "apps/cli/args.h"
#include "codelets/support/codelet_support.h"
#include "model/io/json.h"
#include "model/runtime/runtime.h"
#include "perf/bench_support.h"

#include <starpu.h>

#include <cstdio>
#include <string>
#include <vector>

namespace starcnn {
namespace {

struct Options {
  long tasks = 2000, rounds = 5;
};

void empty_task(void *[], void *) {}

starpu_perfmodel overhead_model = history_model("starcnn_task_overhead");
// The same function on each kind of worker, each codelet runnable on one kind only; the buffers
// are given at each insert (the held handle, then the task's own).
starpu_codelet cpu_codelet =
    make_codelet("task_overhead", empty_task, nullptr, &overhead_model, {});
starpu_codelet cuda_codelet =
    make_codelet("task_overhead", nullptr, empty_task, &overhead_model, {});

// Microseconds per task of one empty task per handle, each waiting for `gate` (held meanwhile).
double submit_us(starpu_codelet *cl, starpu_data_handle_t gate,
                 const std::vector<starpu_data_handle_t> &handles) {
  starpu_data_acquire(gate, STARPU_RW);
  const double start = starpu_timing_now();
  for (starpu_data_handle_t handle : handles)
    check_submit(starpu_task_insert(cl, STARPU_R, gate, STARPU_RW, handle, 0), "task_overhead");
  const double end = starpu_timing_now();
  starpu_data_release(gate);
  starpu_task_wait_for_all();
  return (end - start) / double(handles.size());
}

// Microseconds per task of a chain of `count` dependent empty tasks on `handle`, from the release
// of `gate`, which the first one waits for.
double chain_us(starpu_codelet *cl, starpu_data_handle_t gate, starpu_data_handle_t handle,
                long count) {
  starpu_data_acquire(gate, STARPU_RW);
  check_submit(starpu_task_insert(cl, STARPU_R, gate, STARPU_RW, handle, 0), "task_overhead");
  for (long i = 1; i < count; ++i)
    check_submit(starpu_task_insert(cl, STARPU_RW, handle, 0), "task_overhead");
  const double start = starpu_timing_now();
  starpu_data_release(gate);
  starpu_task_wait_for_all();
  return (starpu_timing_now() - start) / double(count);
}

int run(const Options &o) {
#ifdef STARPU_SIMGRID
  throw std::runtime_error("task_overhead measures a real machine: build it without SimGrid");
#endif
  Runtime runtime;
  const MachineWorkers workers = runtime.workers();
  std::vector<float> values(size_t(o.tasks) + 2, 0.0f);
  std::vector<starpu_data_handle_t> handles(size_t(o.tasks));
  for (size_t i = 0; i < handles.size(); ++i)
    starpu_variable_data_register(&handles[i], STARPU_MAIN_RAM, uintptr_t(&values[i]),
                                  sizeof(float));
  starpu_data_handle_t chain = nullptr, gate = nullptr;
  starpu_variable_data_register(&chain, STARPU_MAIN_RAM, uintptr_t(&values[size_t(o.tasks)]),
                                sizeof(float));
  starpu_variable_data_register(&gate, STARPU_MAIN_RAM, uintptr_t(&values.back()), sizeof(float));

  // One untimed round calibrates the empty codelet's perf model, as a step's warm-up does.
  std::vector<double> submit_times, cpu_times, cuda_times;
  for (long round = 0; round <= o.rounds; ++round) {
    const double submit_time = submit_us(&cpu_codelet, gate, handles);
    const double cpu_time = chain_us(&cpu_codelet, gate, chain, o.tasks);
    const double cuda_time = workers.cuda > 0 ? chain_us(&cuda_codelet, gate, chain, o.tasks) : 0.0;
    if (round == 0) continue;
    submit_times.push_back(submit_time);
    cpu_times.push_back(cpu_time);
    cuda_times.push_back(cuda_time);
  }
  for (starpu_data_handle_t handle : handles) starpu_data_unregister(handle);
  starpu_data_unregister(chain);
  starpu_data_unregister(gate);

  json::Object line;
  line.string("engine", "starcnn")
      .string("benchmark", "task_overhead")
      .string("scheduler", runtime.scheduler())
      .string("workers", runtime.describe_workers())
      .integer("cpu_workers", workers.cpu)
      .integer("cuda_workers", workers.cuda)
      .integer("tasks", o.tasks)
      .integer("rounds", o.rounds)
      .fixed("submit_us", median(submit_times), 3)
      .fixed("cpu_chain_us", median(cpu_times), 3);
  if (workers.cuda > 0) line.fixed("cuda_chain_us", median(cuda_times), 3);
  std::printf("%s\n", line.text().c_str());
  std::fprintf(stderr, "task_overhead: %s, %s\n", runtime.describe_workers().c_str(),
               runtime.scheduler().c_str());
  std::fprintf(stderr, "%10s %13s %14s\n", "submit_us", "cpu_chain_us", "cuda_chain_us");
  std::fprintf(stderr, "%10.3f %13.3f %14s\n", median(submit_times), median(cpu_times),
               workers.cuda > 0 ? std::to_string(median(cuda_times)).c_str() : "-");
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  using namespace starcnn;
  Options o;
  return run_program("task_overhead", [&] {
    ArgParser args(
        "task_overhead",
        "Measures StarPU's cost per task on this machine with empty tasks: the submitting\n"
        "thread's time per task (tasks held back by a handle it holds, workers live) and the\n"
        "time per task of a chain of dependent\n"
        "tasks on the CPU workers and on the CUDA workers. These are what the perf models leave\n"
        "out; perf/simulate --overheads charges them. STARPU_SCHED picks the scheduler (default:\n"
        "train's choice). One JSON line on stdout, a table on stderr.");
    args.add("tasks", "N", "tasks per measurement", &o.tasks, 10, 1000000);
    args.add("rounds", "N", "timed rounds (the median is reported), after one untimed", &o.rounds,
             1, 1000);
    if (!args.parse(argc, argv)) return 0;
    return run(o);
  });
}
