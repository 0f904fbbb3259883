// Measures StarPU's own cost per task on this machine: the part of a step that the perf models do
// not hold (they time a codelet's function alone), so that the SimGrid simulation can charge it
// (perf/simulate --overheads). With empty tasks, the workers running (idle ones poll, as in a
// step) and the tasks held back by a handle the main thread holds:
//   submit_us      the submitting thread's time per task (starpu_task_insert of a task on a handle
//                  of its own, waiting for the held one);
//   cpu_chain_us   per task of a chain of dependent tasks on the CPU workers, from the release of
//                  the held handle to the end of the last: the dependency release, push, pop,
//                  wake-up and the driver's work around the function;
//   cuda_chain_us  the same on the CUDA workers (where there are any);
//   cpu_chain_moved      the share of that chain's tasks that ran on another worker than the one
//                        before (dmda may keep a chain on one worker, which then pushes to itself);
//   cpu_handoff_us       a chain of dependent tasks each allowed on the next CPU worker in turn
//                        only, so that every task is pushed by the worker that ran its predecessor
//                        onto another one, busy polling: dmda's push to a remote worker waits for
//                        that worker's "relaxed" state (starpu_worker_lock), as in a step, where
//                        call h's traces put most dependent CPU tasks on another worker
//                        (cpu_handoff_moved: the share that moved, 1 unless the masks failed);
//   cpu_parallel_chain_us  per task of one chain per CPU worker, all at once (each allowed on its
//                        own worker): the same costs with every worker pushing and popping;
//   fanout_hN_us   one task per CPU worker (each allowed on its own worker), each naming N handles
//                  (the held one, then N - 1 of its own), all readied by one release: the time
//                  between the first start and the last over the tasks after the first: a sample
//                  split's chains, readied by the CPU update, started ~45 us apart with 14 handles
//                  each under the H100's MPS cap (perf/results/h100-2026-12-06-f), and with 5
//                  (perf/results/h100-2026-12-07-a), where this fan-out gave 5-7 us;
//   fanout_task_released_us  the same with 5 handles, but each task pinned to its worker
//                  (STARPU_EXECUTE_ON_WORKER, as the chains are) and all readied by the end of a
//                  task on the first CPU worker (as the CPU update readies the chains), not by the
//                  main thread's release;
//   fanout_chainlike_us  that, each task naming a chain's kinds of data instead: a vector of
//                  lenet's packed weights that all read, one of that size its own to write (its
//                  gradients) and a small one that all share in STARPU_REDUX (the loss sums).
//                  Which of the three the stagger needs is what they tell apart;
//   fanout_busy_us   that, each task then computing for 1 ms as a chain does (the started ones
//                  busy while the later ones are released): H100 call k's traced chains started
//                  ~50 us apart where the empty fan-outs start 4-8 us apart.
// With --after-parking, a first StarPU of the process parks its CPU workers once and stops before
// the measured one starts: the state in which train_benchmark's later configurations and auto's
// later candidates run (model/runtime/parked_workers.h).
// Medians over --rounds. One JSON line on stdout, a table on stderr.
#include "apps/cli/args.h"
#include "codelets/accumulate.h"
#include "codelets/support/codelet_support.h"
#include "model/io/json.h"
#include "model/runtime/parked_workers.h"
#include "model/runtime/runtime.h"
#include "perf/bench_support.h"

#include <starpu.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace starcnn {
namespace {

struct Options {
  long tasks = 2000, rounds = 5;
  bool after_parking = false;
};

// The fan-out's handles per task: a batch load's 2, a sample split's CPU chain with packed
// gradients 5, with per-parameter gradients (lenet) 14.
const std::vector<int> kFanoutHandles = {2, 5, 14};
constexpr int kFanoutRepeats = 9;

// The worker that ran the previous task of a chain and how many tasks moved to another (chain
// tasks run one at a time: no lock needed).
int last_worker = -1;
long moves = 0;
void empty_task(void *[], void *) {
  const int worker = starpu_worker_get_id();
  if (last_worker >= 0 && worker != last_worker) ++moves;
  last_worker = worker;
}

// Each CPU worker's start time of the last fan-out task it ran (indexed by worker id).
std::vector<double> fanout_starts;
void stamp_task(void *[], void *) {
  fanout_starts[size_t(starpu_worker_get_id())] = starpu_timing_now();
}
// The same, then busy for kBusyUs as a chain's kernels keep its core (no sleep, no memory traffic).
constexpr double kBusyUs = 1000;
void stamp_and_compute_task(void *[], void *) {
  const double start = starpu_timing_now();
  fanout_starts[size_t(starpu_worker_get_id())] = start;
  volatile double sink = 0;
  while (starpu_timing_now() - start < kBusyUs) sink = sink + 1.0;
}

starpu_perfmodel overhead_model = history_model("starcnn_task_overhead");
// The same function on each kind of worker, each codelet runnable on one kind only; the buffers
// are given at each insert (the held handle, then the task's own).
starpu_codelet cpu_codelet =
    make_codelet("task_overhead", empty_task, nullptr, &overhead_model, {});
starpu_codelet cuda_codelet =
    make_codelet("task_overhead", nullptr, empty_task, &overhead_model, {});
starpu_perfmodel fanout_model = history_model("starcnn_task_overhead_fanout");
starpu_codelet fanout_codelet =
    make_codelet("task_overhead_fanout", stamp_task, nullptr, &fanout_model, {});
starpu_perfmodel busy_fanout_model = history_model("starcnn_task_overhead_busy_fanout");
starpu_codelet busy_fanout_codelet = make_codelet(
    "task_overhead_busy_fanout", stamp_and_compute_task, nullptr, &busy_fanout_model, {});

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

// One worker mask (STARPU_TASK_WORKERIDS' bits) per CPU worker, allowing that worker alone; the
// tasks point into them until they end.
using WorkerMask = std::vector<uint32_t>;
std::vector<WorkerMask> cpu_worker_masks() {
  std::vector<int> ids(starpu_worker_get_count_by_type(STARPU_CPU_WORKER));
  starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids.data(), unsigned(ids.size()));
  std::vector<WorkerMask> masks;
  for (int id : ids) {
    WorkerMask mask(starpu_worker_get_count() / 32 + 1, 0);
    mask[unsigned(id) / 32] |= 1u << (unsigned(id) % 32);
    masks.push_back(mask);
  }
  return masks;
}

// Submits an empty task on `handle` (RW), after `gate` (R) where given, allowed on `mask`'s
// worker only where given.
void insert_empty(starpu_codelet *cl, starpu_data_handle_t gate, starpu_data_handle_t handle,
                  WorkerMask *mask) {
  const unsigned words = mask ? unsigned(mask->size()) : 0;
  uint32_t *bits = mask ? mask->data() : nullptr;
  if (gate)
    check_submit(starpu_task_insert(cl, STARPU_R, gate, STARPU_RW, handle, STARPU_TASK_WORKERIDS,
                                    words, bits, 0),
                 "task_overhead");
  else
    check_submit(starpu_task_insert(cl, STARPU_RW, handle, STARPU_TASK_WORKERIDS, words, bits, 0),
                 "task_overhead");
}

// Microseconds per task (of `count`) from the release of `gate`, which the tasks submitted behind
// it wait for, to the end of every task.
double release_and_time(starpu_data_handle_t gate, long count) {
  const double start = starpu_timing_now();
  starpu_data_release(gate);
  starpu_task_wait_for_all();
  return (starpu_timing_now() - start) / double(count);
}

// Microseconds per task of a chain of `count` dependent empty tasks on `handle`, from the release
// of `gate`, which the first one waits for. With `masks`, task i may run on masks[i % size] only.
double chain_us(starpu_codelet *cl, starpu_data_handle_t gate, starpu_data_handle_t handle,
                long count, std::vector<WorkerMask> *masks = nullptr) {
  const auto mask = [&](long i) { return masks ? &(*masks)[size_t(i) % masks->size()] : nullptr; };
  starpu_data_acquire(gate, STARPU_RW);
  insert_empty(cl, gate, handle, mask(0));
  for (long i = 1; i < count; ++i) insert_empty(cl, nullptr, handle, mask(i));
  last_worker = -1;
  moves = 0;
  return release_and_time(gate, count);
}

// Microseconds per task of one chain of `count` tasks per CPU worker (handles[k], allowed on
// masks[k]'s worker only), all released at once by `gate`: tasks of all chains end per this time.
double parallel_chains_us(starpu_codelet *cl, starpu_data_handle_t gate,
                          const std::vector<starpu_data_handle_t> &handles,
                          std::vector<WorkerMask> &masks, long count) {
  starpu_data_acquire(gate, STARPU_RW);
  for (size_t k = 0; k < masks.size(); ++k) insert_empty(cl, gate, handles[k], &masks[k]);
  // Round-robin over the chains, as a step submits its layers' parts.
  for (long i = 1; i < count; ++i)
    for (size_t k = 0; k < masks.size(); ++k) insert_empty(cl, nullptr, handles[k], &masks[k]);
  return release_and_time(gate, count);
}

// A fan-out task's buffers: R on `gate`, then W on each of `own`.
std::vector<starpu_data_descr> gate_then_own(starpu_data_handle_t gate,
                                             const std::vector<starpu_data_handle_t> &own) {
  std::vector<starpu_data_descr> buffers = {{gate, STARPU_R}};
  for (starpu_data_handle_t h : own) buffers.push_back({h, STARPU_W});
  return buffers;
}

// Releases `handle`, which holds back a fan-out of `tasks` tasks, and returns
// (last start - first start) / (tasks - 1).
double release_fanout(starpu_data_handle_t handle, size_t tasks) {
  fanout_starts.assign(starpu_worker_get_count(), 0.0);
  release_and_time(handle, long(tasks));
  std::vector<double> starts;  // of the workers that ran one
  for (double t : fanout_starts)
    if (t > 0) starts.push_back(t);
  const auto [first, last] = std::minmax_element(starts.begin(), starts.end());
  return (*last - *first) / double(tasks - 1);
}

// Microseconds between the starts of one task per CPU worker (masks[k]'s task on own[k], R on
// `gate` then W on each of its handles), all readied by the release of `gate`: (last start - first
// start) / (tasks - 1).
double fanout_us(starpu_data_handle_t gate,
                 const std::vector<std::vector<starpu_data_handle_t>> &own,
                 std::vector<WorkerMask> &masks) {
  starpu_data_acquire(gate, STARPU_RW);
  for (size_t k = 0; k < masks.size(); ++k) {
    std::vector<starpu_data_descr> buffers = gate_then_own(gate, own[k]);
    check_submit(starpu_task_insert(&fanout_codelet, STARPU_DATA_MODE_ARRAY, buffers.data(),
                                    int(buffers.size()), STARPU_TASK_WORKERIDS,
                                    unsigned(masks[k].size()), masks[k].data(), 0),
                 "task_overhead");
  }
  return release_fanout(gate, masks.size());
}

// The chain-like fan-outs' data: `hold` (held by the main thread) keeps the releasing task back,
// which writes `gate`, which every fan-out task reads.
struct ChainlikeData {
  starpu_data_handle_t hold = nullptr, gate = nullptr, weights = nullptr, loss = nullptr;
  std::vector<starpu_data_handle_t> grads;  // one per CPU worker
  std::vector<float> weight_values, grad_values, scalar_values;
};
constexpr size_t kLenetPackedWeights = 61706;  // floats: lenet's parameters, as its chains see them

ChainlikeData register_chainlike(size_t workers) {
  ChainlikeData d;
  d.weight_values.assign(kLenetPackedWeights, 0.0f);
  d.grad_values.assign(kLenetPackedWeights * workers, 0.0f);
  d.scalar_values.assign(4, 0.0f);  // hold, gate, then the two loss sums
  starpu_variable_data_register(&d.hold, STARPU_MAIN_RAM, uintptr_t(&d.scalar_values[0]),
                                sizeof(float));
  starpu_variable_data_register(&d.gate, STARPU_MAIN_RAM, uintptr_t(&d.scalar_values[1]),
                                sizeof(float));
  starpu_vector_data_register(&d.weights, STARPU_MAIN_RAM, uintptr_t(d.weight_values.data()),
                              uint32_t(kLenetPackedWeights), sizeof(float));
  starpu_vector_data_register(&d.loss, STARPU_MAIN_RAM, uintptr_t(&d.scalar_values[2]), 2,
                              sizeof(float));
  set_sum_reduction(d.loss, Where::cpu);
  d.grads.resize(workers);
  for (size_t k = 0; k < workers; ++k)
    starpu_vector_data_register(&d.grads[k], STARPU_MAIN_RAM,
                                uintptr_t(&d.grad_values[k * kLenetPackedWeights]),
                                uint32_t(kLenetPackedWeights), sizeof(float));
  return d;
}

void unregister_chainlike(ChainlikeData &d) {
  for (starpu_data_handle_t handle : d.grads) starpu_data_unregister(handle);
  for (starpu_data_handle_t handle : {d.hold, d.gate, d.weights, d.loss})
    starpu_data_unregister(handle);
}

// Microseconds between the starts of one task per CPU worker (`workers`), each pinned to its
// worker and readied by the end of a task on workers[0]: with a chain's kinds of data where
// `chainlike`, else the gate and own[k]'s small handles; each running `cl` (fanout_codelet or
// busy_fanout_codelet).
double task_released_fanout_us(ChainlikeData &d, const std::vector<int> &workers,
                               const std::vector<std::vector<starpu_data_handle_t>> &own,
                               bool chainlike, starpu_codelet *cl = &fanout_codelet) {
  starpu_data_acquire(d.hold, STARPU_RW);
  check_submit(starpu_task_insert(&cpu_codelet, STARPU_R, d.hold, STARPU_RW, d.gate,
                                  STARPU_EXECUTE_ON_WORKER, workers[0], 0),
               "task_overhead");
  for (size_t k = 0; k < workers.size(); ++k) {
    std::vector<starpu_data_descr> buffers =
        chainlike ? std::vector<starpu_data_descr>{{d.gate, STARPU_R},
                                                   {d.weights, STARPU_R},
                                                   {d.grads[k], STARPU_W},
                                                   {d.loss, STARPU_REDUX}}
                  : gate_then_own(d.gate, own[k]);
    check_submit(starpu_task_insert(cl, STARPU_DATA_MODE_ARRAY, buffers.data(), int(buffers.size()),
                                    STARPU_EXECUTE_ON_WORKER, workers[k], 0),
                 "task_overhead");
  }
  return release_fanout(d.hold, workers.size());
}

int run(const Options &o) {
#ifdef STARPU_SIMGRID
  throw std::runtime_error("task_overhead measures a real machine: build it without SimGrid");
#endif
  if (o.after_parking) {
    Runtime first;
    run_with_cpu_workers_parked(1, [] {});
  }
  Runtime runtime;
  const MachineWorkers workers = runtime.workers();
  std::vector<WorkerMask> masks = cpu_worker_masks();
  std::vector<float> values(size_t(o.tasks) + masks.size() + 2, 0.0f);
  std::vector<starpu_data_handle_t> handles(size_t(o.tasks)), lanes(masks.size());
  for (size_t i = 0; i < handles.size(); ++i)
    starpu_variable_data_register(&handles[i], STARPU_MAIN_RAM, uintptr_t(&values[i]),
                                  sizeof(float));
  for (size_t k = 0; k < lanes.size(); ++k)
    starpu_variable_data_register(&lanes[k], STARPU_MAIN_RAM,
                                  uintptr_t(&values[handles.size() + k]), sizeof(float));
  starpu_data_handle_t chain = nullptr, gate = nullptr;
  starpu_variable_data_register(&chain, STARPU_MAIN_RAM, uintptr_t(&values[values.size() - 2]),
                                sizeof(float));
  starpu_variable_data_register(&gate, STARPU_MAIN_RAM, uintptr_t(&values.back()), sizeof(float));
  // The fan-out tasks' own handles: kFanoutHandles.back() - 1 per CPU worker.
  const size_t own_per_task = size_t(kFanoutHandles.back() - 1);
  std::vector<float> fanout_values(masks.size() * own_per_task, 0.0f);
  std::vector<std::vector<starpu_data_handle_t>> fanout_own(masks.size());
  for (size_t k = 0; k < masks.size(); ++k)
    for (size_t h = 0; h < own_per_task; ++h) {
      starpu_data_handle_t handle = nullptr;
      starpu_variable_data_register(&handle, STARPU_MAIN_RAM,
                                    uintptr_t(&fanout_values[k * own_per_task + h]), sizeof(float));
      fanout_own[k].push_back(handle);
    }

  // The task-released fan-outs: the first CPU worker releases, every CPU worker runs one.
  std::vector<int> cpu_ids(masks.size());
  starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, cpu_ids.data(), unsigned(cpu_ids.size()));
  ChainlikeData chainlike = register_chainlike(masks.size());
  // own_by_count[f][k]: worker k's task's own handles, kFanoutHandles[f] with the gate.
  std::vector<std::vector<std::vector<starpu_data_handle_t>>> own_by_count;
  for (int count : kFanoutHandles) {
    own_by_count.emplace_back();
    for (const auto &handles_of_one : fanout_own)
      own_by_count.back().emplace_back(handles_of_one.begin(),
                                       handles_of_one.begin() + (count - 1));
  }
  const auto &five_handles = own_by_count[1];  // kFanoutHandles[1]: a packed chain's 5

  // One untimed round calibrates the empty codelet's perf model, as a step's warm-up does. A
  // hand-off needs two CPU workers.
  const bool handoff = masks.size() > 1;
  std::vector<double> submit_times, cpu_times, cuda_times, moved, handoff_times, handoff_moved,
      parallel_times;
  std::vector<std::vector<double>> fanout_times(kFanoutHandles.size());
  std::vector<double> task_released_times, chainlike_times, busy_times;
  for (long round = 0; round <= o.rounds; ++round) {
    const double submit_time = submit_us(&cpu_codelet, gate, handles);
    const double cpu_time = chain_us(&cpu_codelet, gate, chain, o.tasks);
    const double cpu_moved = double(moves) / double(o.tasks - 1);
    const double cuda_time = workers.cuda > 0 ? chain_us(&cuda_codelet, gate, chain, o.tasks) : 0.0;
    const double handoff_time =
        handoff ? chain_us(&cpu_codelet, gate, chain, o.tasks, &masks) : 0.0;
    const double handoff_share = double(moves) / double(o.tasks - 1);
    const double parallel_time =
        parallel_chains_us(&cpu_codelet, gate, lanes, masks, o.tasks / long(masks.size()) + 1);
    std::vector<double> fanout(kFanoutHandles.size());
    for (size_t f = 0; handoff && f < kFanoutHandles.size(); ++f) {
      // The median of several fan-outs: one is a single sample of each gap.
      std::vector<double> samples;
      for (int i = 0; i < kFanoutRepeats; ++i)
        samples.push_back(fanout_us(gate, own_by_count[f], masks));
      fanout[f] = median(samples);
    }
    double task_released = 0, chainlike_spread = 0, busy_spread = 0;
    if (handoff) {
      std::vector<double> released, chainlike_samples, busy_samples;
      for (int i = 0; i < kFanoutRepeats; ++i) {
        released.push_back(task_released_fanout_us(chainlike, cpu_ids, five_handles, false));
        chainlike_samples.push_back(
            task_released_fanout_us(chainlike, cpu_ids, five_handles, true));
        busy_samples.push_back(
            task_released_fanout_us(chainlike, cpu_ids, five_handles, true, &busy_fanout_codelet));
      }
      task_released = median(released);
      chainlike_spread = median(chainlike_samples);
      busy_spread = median(busy_samples);
    }
    if (round == 0) continue;
    for (size_t f = 0; f < fanout.size(); ++f) fanout_times[f].push_back(fanout[f]);
    task_released_times.push_back(task_released);
    chainlike_times.push_back(chainlike_spread);
    busy_times.push_back(busy_spread);
    submit_times.push_back(submit_time);
    cpu_times.push_back(cpu_time);
    moved.push_back(cpu_moved);
    cuda_times.push_back(cuda_time);
    handoff_times.push_back(handoff_time);
    handoff_moved.push_back(handoff_share);
    parallel_times.push_back(parallel_time);
  }
  for (starpu_data_handle_t handle : handles) starpu_data_unregister(handle);
  for (starpu_data_handle_t handle : lanes) starpu_data_unregister(handle);
  for (const auto &handles_of_one : fanout_own)
    for (starpu_data_handle_t handle : handles_of_one) starpu_data_unregister(handle);
  unregister_chainlike(chainlike);
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
      .boolean("after_parking", o.after_parking)
      .fixed("submit_us", median(submit_times), 3)
      .fixed("cpu_chain_us", median(cpu_times), 3)
      .fixed("cpu_chain_moved", median(moved), 3);
  if (workers.cuda > 0) line.fixed("cuda_chain_us", median(cuda_times), 3);
  if (handoff)
    line.fixed("cpu_handoff_us", median(handoff_times), 3)
        .fixed("cpu_handoff_moved", median(handoff_moved), 3);
  line.fixed("cpu_parallel_chain_us", median(parallel_times), 3);
  for (size_t f = 0; handoff && f < kFanoutHandles.size(); ++f)
    line.fixed("fanout_h" + std::to_string(kFanoutHandles[f]) + "_us", median(fanout_times[f]), 3);
  if (handoff)
    line.fixed("fanout_task_released_us", median(task_released_times), 3)
        .fixed("fanout_chainlike_us", median(chainlike_times), 3)
        .fixed("fanout_busy_us", median(busy_times), 3);
  std::printf("%s\n", line.text().c_str());
  std::fprintf(stderr, "task_overhead: %s, %s\n", runtime.describe_workers().c_str(),
               runtime.scheduler().c_str());
  std::fprintf(stderr, "%10s %13s %6s %14s %15s %22s\n", "submit_us", "cpu_chain_us", "moved",
               "cuda_chain_us", "cpu_handoff_us", "cpu_parallel_chain_us");
  std::fprintf(
      stderr, "%10.3f %13.3f %6.3f %14s %15s %22.3f\n", median(submit_times), median(cpu_times),
      median(moved), workers.cuda > 0 ? std::to_string(median(cuda_times)).c_str() : "-",
      handoff ? std::to_string(median(handoff_times)).c_str() : "-", median(parallel_times));
  for (size_t f = 0; handoff && f < kFanoutHandles.size(); ++f)
    std::fprintf(stderr, "fan-out of %zu tasks of %d handles: %.3f us between starts\n",
                 masks.size(), kFanoutHandles[f], median(fanout_times[f]));
  if (handoff)
    std::fprintf(stderr,
                 "fan-out readied by a task, pinned tasks: %.3f us between starts (5 handles), "
                 "%.3f with a chain's data, %.3f with it and 1 ms of work each\n",
                 median(task_released_times), median(chainlike_times), median(busy_times));
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
        "thread's time per task (tasks held back by a handle it holds, workers live), the\n"
        "time per task of a chain of dependent tasks on the CPU workers and on the CUDA\n"
        "workers, of a chain handed from one CPU worker to the next at each task, of one\n"
        "chain per CPU worker at once, and the gap between the starts of one task per CPU\n"
        "worker readied together (2, 5 and 14 handles a task; then readied by a task's end,\n"
        "pinned as a sample split's chains, with 5 small handles and with a chain's data).\n"
        "These are what the perf models leave out; perf/simulate --overheads charges them.\n"
        "STARPU_SCHED picks the scheduler (default: train's choice). One JSON line on\n"
        "stdout, a table on stderr.");
    args.add("tasks", "N", "tasks per measurement", &o.tasks, 10, 1000000);
    args.add("rounds", "N", "timed rounds (the median is reported), after one untimed", &o.rounds,
             1, 1000);
    args.add_flag("after-parking",
                  "first start a StarPU, park its CPU workers but one once and stop it (as "
                  "train_benchmark's all-cuda does before its later configurations)",
                  &o.after_parking);
    if (!args.parse(argc, argv)) return 0;
    return run(o);
  });
}
