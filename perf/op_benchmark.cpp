// Microseconds per call of every op of the seed's net (lenet on 3x32x32) run as StarPU tasks, on
// CPU workers and on CUDA workers: one JSON line per (device, batch, layer, op) on stdout, with the
// fields and op names of perf/torch/torch_ops.py so that perf/compare_ops.py can join the two.
//
// Method, per op: its operands are random (never zeros) and registered once; R calls are submitted
// back to back restricted to one worker kind and waited for; us_per_call is the median over rounds
// of wall time / R, so it includes StarPU's per-task overhead. Before timing, a warm-up calibrates
// the op's perf model and a probe picks R so that a round lasts about --round-ms.
// StarPU runs ONE CPU worker (STARPU_NCPU=1 unless set), so a CPU figure is one core's, as
// torch_ops.py's single thread. Extra fields:
//   kernel_us (CPU only): the bare <op>_cpu function called in a loop on the CPU worker's thread;
//   exec_us: StarPU's per-worker executing time over one more round with profiling on, per call
//            (for CUDA, from task start to the end of its asynchronous work on the stream).
#include "apps/cli/blas_core.h"
#include "apps/cli/math_option.h"
#include "apps/cli/version.h"
#include "codelets/accumulate.h"
#include "codelets/conv2d/conv2d_backward_data.h"
#include "codelets/conv2d/conv2d_backward_filter.h"
#include "codelets/conv2d/conv2d_forward.h"
#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/conv2d/sample_groups.h"
#include "codelets/linear.h"
#include "codelets/maxpool.h"
#include "codelets/relu.h"
#include "codelets/sgd.h"
#include "codelets/softmax_xent.h"
#include "codelets/support/codelet_runtime.h"
#include "codelets/support/codelet_support.h"
#include "model/io/json.h"

#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace starcnn {
namespace {

constexpr const char *kUsage =
    "usage: op_benchmark [--batches 64,256] [--where cpu,cuda] [--rounds N] [--round-ms MS]\n"
    "                    [--math fp32|tf32] [--loaded N]\n"
    "\n"
    "Times every op of lenet (3x32x32) as StarPU tasks restricted to CPU or CUDA workers and\n"
    "prints one JSON line per (device, batch, layer, op) on stdout, a table on stderr.\n"
    "  --batches LIST   comma-separated batch sizes (default 64,256)\n"
    "  --where LIST     cpu, cuda or cpu,cuda (default); CUDA is skipped without a CUDA worker\n"
    "  --rounds N       timed rounds per op, the median is reported (default 5)\n"
    "  --round-ms MS    target length of one round in milliseconds (default 30)\n"
    "  --math fp32|tf32 arithmetic of the CUDA convolutions: tf32 lets cuDNN use TF32 tensor\n"
    "                   cores (PyTorch's default), fp32 keeps strict FP32 (default tf32)\n"
    "  --loaded N       also time each bare CPU kernel on N CPU workers at once, each on its own\n"
    "                   operands (kernel_us_loaded: the median of their medians; needs\n"
    "                   STARPU_NCPU >= N): how much a kernel slows when every core works\n"
    "  --version        the versions of starcnn and its libraries\n"
    "StarPU runs one CPU worker unless STARPU_NCPU is set; STARPU_SCHED is StarPU's (default "
    "dmda).\n";

struct Options {
  std::vector<uint32_t> batches{64, 256};
  std::vector<std::string> devices{"cpu", "cuda"};
  int rounds = 5;
  double round_ms = 30.0;
  std::string math = kDefaultProgramMath;
  int loaded = 0;  // CPU workers running the bare kernel at once (0: not measured)
};

std::vector<std::string> split_list(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) throw std::invalid_argument("empty item in list '" + text + "'");
    items.push_back(item);
  }
  if (items.empty()) throw std::invalid_argument("empty list");
  return items;
}

long parse_positive(const std::string &text, const std::string &flag, long max) {
  char *end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value <= 0 || value > max)
    throw std::invalid_argument(flag + " wants a whole number in 1.." + std::to_string(max) +
                                ", not '" + text + "'");
  return value;
}

// Accepts "--flag value" and "--flag=value".
Options parse_options(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    const size_t equals = flag.find('=');
    if (equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    } else if (flag == "--version") {
      std::fputs(version_text("op_benchmark").c_str(), stdout);
      std::exit(0);
    } else if (flag != "--help" && flag != "-h") {
      if (flag != "--batches" && flag != "--where" && flag != "--rounds" && flag != "--round-ms" &&
          flag != "--math" && flag != "--loaded")
        throw std::invalid_argument("unknown option '" + flag + "'");
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      value = argv[++i];
    }
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--batches") {
      options.batches.clear();
      for (const std::string &item : split_list(value))
        options.batches.push_back(static_cast<uint32_t>(parse_positive(item, flag, 65536)));
    } else if (flag == "--where") {
      options.devices = split_list(value);
      for (const std::string &device : options.devices)
        if (device != "cpu" && device != "cuda")
          throw std::invalid_argument("--where takes cpu and/or cuda, not '" + device + "'");
    } else if (flag == "--rounds") {
      options.rounds = static_cast<int>(parse_positive(value, flag, 1000));
    } else if (flag == "--round-ms") {
      options.round_ms = static_cast<double>(parse_positive(value, flag, 60000));
    } else if (flag == "--loaded") {
      options.loaded = static_cast<int>(parse_positive(value, flag, 1024));
    } else if (flag == "--math") {
      if (!parse_conv_math(value))
        throw std::invalid_argument("--math must be fp32 or tf32, got '" + value + "'");
      options.math = value;
    } else {
      throw std::invalid_argument("unknown option '" + flag + "'");
    }
  }
  return options;
}

// A pinned host buffer of random values, registered with StarPU as a vector handle.
class Operand {
 public:
  Operand(size_t count, size_t element_size) : count_(count), bytes_(count * element_size) {
    if (starpu_malloc(&data_, bytes_) != 0) throw std::runtime_error("starpu_malloc failed");
    starpu_vector_data_register(&handle_, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data_),
                                static_cast<uint32_t>(count), element_size);
  }
  ~Operand() {
    starpu_data_unregister(handle_);
    starpu_free(data_);
  }
  Operand(const Operand &) = delete;
  Operand &operator=(const Operand &) = delete;

  size_t count() const { return count_; }
  starpu_data_handle_t handle() const { return handle_; }
  // Host views, for the bare kernels: only valid before any task has touched the handle.
  float *f32() const { return static_cast<float *>(data_); }
  int32_t *i32() const { return static_cast<int32_t *>(data_); }

 private:
  size_t count_;
  size_t bytes_;
  void *data_ = nullptr;
  starpu_data_handle_t handle_ = nullptr;
};

// One op to time: how to submit one call (one or two tasks) and how to run its bare CPU kernel.
struct OpCase {
  std::string layer;
  std::string op;
  int tasks_per_call = 1;
  std::function<void(Where)> submit;
  std::function<void()> kernel;
  std::function<void()> after_round;  // host work between rounds, outside the timer
};

// The weight-gradient submit with its "overwrite" access: the value 0 of whatever enum it takes,
// so this compiles with the current mode enum and with its planned replacement alike.
template <typename Access>
void submit_weight_gradient(void (*submit)(starpu_data_handle_t, starpu_data_handle_t,
                                           starpu_data_handle_t, starpu_data_handle_t,
                                           const LinearShape &, Access, Where, int),
                            starpu_data_handle_t x, starpu_data_handle_t dy,
                            starpu_data_handle_t dw, starpu_data_handle_t db,
                            const LinearShape &shape, Where where) {
  submit(x, dy, dw, db, shape, Access{}, where, 0);
}

// Every op of lenet at one batch size, owning their operands.
class LenetOps {
 public:
  LenetOps(uint32_t batch, uint32_t seed) : batch_(batch), rng_(seed) {
    add_conv("conv1", 3, 6, 32);
    add_conv("conv2", 6, 16, 14);
    add_linear("fc1", 400, 120);
    add_linear("fc2", 120, 84);
    add_linear("fc3", 84, 10);
    add_loss(10);
  }
  const std::vector<OpCase> &cases() const { return cases_; }

 private:
  Operand *floats(size_t count) {
    operands_.push_back(std::make_unique<Operand>(count, sizeof(float)));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    float *data = operands_.back()->f32();
    for (size_t i = 0; i < count; ++i) data[i] = dist(rng_);
    return operands_.back().get();
  }
  Operand *labels(size_t count, uint32_t classes) {
    operands_.push_back(std::make_unique<Operand>(count, sizeof(int32_t)));
    std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(classes) - 1);
    int32_t *data = operands_.back()->i32();
    for (size_t i = 0; i < count; ++i) data[i] = dist(rng_);
    return operands_.back().get();
  }
  void add(const std::string &layer, const std::string &op, std::function<void(Where)> submit,
           std::function<void()> kernel, int tasks_per_call = 1) {
    cases_.push_back({layer, op, tasks_per_call, std::move(submit), std::move(kernel), nullptr});
  }

  // conv 5x5 (c_in -> c_out) on size x size, then ReLU, maxpool 2 and the weights' SGD step.
  void add_conv(const std::string &layer, uint32_t c_in, uint32_t c_out, uint32_t size) {
    Conv2dShape s;
    s.n = batch_;
    s.c_in = c_in;
    s.h = s.w = size;
    s.c_out = c_out;
    s.k = 5;
    prepare_conv2d(s);
    auto col = std::make_shared<std::vector<float>>(cpu_col_floats(s));
    Operand *x = floats(s.x_count()), *w = floats(s.w_count()), *b = floats(s.b_count());
    Operand *y = floats(s.y_count()), *dy = floats(s.y_count());
    Operand *dw = floats(s.w_count()), *db = floats(s.b_count()), *dx = floats(s.x_count());
    add(
        layer, "conv2d_forward",
        [=](Where where) {
          submit_conv2d_forward(x->handle(), w->handle(), b->handle(), y->handle(), s, where);
        },
        [=] { conv2d_forward_cpu(s, x->f32(), w->f32(), b->f32(), y->f32(), col->data()); });
    add(
        layer, "conv2d_backward_filter",
        [=](Where where) {
          submit_conv2d_backward_filter(x->handle(), dy->handle(), dw->handle(), db->handle(), s,
                                        GradientAccess::overwrite, where);
        },
        [=] {
          conv2d_backward_filter_cpu(s, x->f32(), dy->f32(), dw->f32(), db->f32(), col->data(),
                                     false);
        });
    add(
        layer, "conv2d_backward_data",
        [=](Where where) {
          submit_conv2d_backward_data(w->handle(), dy->handle(), dx->handle(), s,
                                      GradientAccess::overwrite, where);
        },
        [=] { conv2d_backward_data_cpu(s, w->f32(), dy->f32(), dx->f32(), col->data(), false); });

    // ReLU and pooling on the conv output's shape; a random (signed) input stands for it.
    const size_t n = s.y_count();
    Operand *a = floats(n), *relu_y = floats(n), *relu_dx = floats(n);
    add(
        layer, "relu_forward",
        [=](Where where) { submit_relu_forward(a->handle(), relu_y->handle(), where); },
        [=] { relu_forward_cpu(a->f32(), relu_y->f32(), n); });
    add(
        layer, "relu_backward",
        [=](Where where) {
          submit_relu_backward(a->handle(), dy->handle(), relu_dx->handle(), where);
        },
        [=] { relu_backward_cpu(a->f32(), dy->f32(), relu_dx->f32(), n); });

    const MaxpoolShape m{batch_, c_out, s.out_h(), s.out_w()};
    Operand *p = floats(m.out_size()), *dp = floats(m.out_size()), *pool_dx = floats(n);
    operands_.push_back(std::make_unique<Operand>(m.out_size(), sizeof(int32_t)));
    Operand *argmax = operands_.back().get();
    maxpool_forward_cpu(a->f32(), p->f32(), argmax->i32(), m);  // valid indices for the backward
    add(
        layer, "maxpool_forward",
        [=](Where where) {
          submit_maxpool_forward(a->handle(), p->handle(), argmax->handle(), m, where);
        },
        [=] { maxpool_forward_cpu(a->f32(), p->f32(), argmax->i32(), m); });
    add(
        layer, "maxpool_backward",
        [=](Where where) {
          submit_maxpool_backward(dp->handle(), argmax->handle(), pool_dx->handle(), m, where);
        },
        [=] { maxpool_backward_cpu(dp->f32(), argmax->i32(), pool_dx->f32(), m); });
    // Not in torch_ops.py: the fused ReLU + maxpool forward that replaces the two ops above. Its
    // own argmax, so the backward's indices stay those of the plain maxpool.
    operands_.push_back(std::make_unique<Operand>(m.out_size(), sizeof(int32_t)));
    Operand *fused_argmax = operands_.back().get();
    add(
        layer, "relu_maxpool_forward",
        [=](Where where) {
          submit_relu_maxpool_forward(a->handle(), p->handle(), fused_argmax->handle(), m, where);
        },
        [=] { maxpool_forward_cpu(a->f32(), p->f32(), fused_argmax->i32(), m, true); });
    add_sgd(layer, s.w_count());
  }

  // fc (in -> out): forward, and backward as PyTorch's (dX, dW and db: two tasks), then SGD.
  void add_linear(const std::string &layer, uint32_t in, uint32_t out) {
    const LinearShape l{batch_, in, out};
    Operand *x = floats(size_t(batch_) * in), *w = floats(size_t(out) * in), *b = floats(out);
    Operand *y = floats(size_t(batch_) * out), *dy = floats(size_t(batch_) * out);
    Operand *dx = floats(size_t(batch_) * in), *dw = floats(size_t(out) * in), *db = floats(out);
    add(
        layer, "linear_forward",
        [=](Where where) {
          submit_linear_forward(x->handle(), w->handle(), b->handle(), y->handle(), l, false,
                                where);
        },
        [=] { linear_forward_cpu(x->f32(), w->f32(), b->f32(), y->f32(), l, false); });
    add(
        layer, "linear_backward",
        [=](Where where) {
          submit_linear_backward_data(w->handle(), dy->handle(), dx->handle(), l, where);
          submit_weight_gradient(submit_linear_backward_weights, x->handle(), dy->handle(),
                                 dw->handle(), db->handle(), l, where);
        },
        [=] {
          linear_backward_data_cpu(w->f32(), dy->f32(), dx->f32(), l);
          linear_backward_weights_cpu(x->f32(), dy->f32(), dw->f32(), db->f32(), l, false);
        },
        2);
    add_sgd(layer, size_t(out) * in);
  }

  // torch_ops.py's optimiser: lr 0.01, momentum 0.9, weight decay 5e-4, on the weights only.
  void add_sgd(const std::string &layer, size_t count) {
    Operand *w = floats(count), *grad = floats(count), *momentum = floats(count);
    const SgdParams params{0.01f, 0.9f, 5e-4f, 0};
    add(
        layer, "sgd_update",
        [=](Where where) {
          submit_sgd_update({{w->handle(), grad->handle(), momentum->handle()}}, params, where);
        },
        [=] { sgd_update_cpu(w->f32(), grad->f32(), momentum->f32(), count, params); });
  }

  void add_loss(uint32_t classes) {
    const SoftmaxXentShape x{batch_, classes};
    const uint32_t batch = batch_;
    Operand *z = floats(size_t(batch_) * classes), *label = labels(batch_, classes);
    Operand *dz = floats(size_t(batch_) * classes), *stats = floats(kXentStatsSize);
    set_sum_reduction(stats->handle());
    auto host_stats = std::make_shared<std::vector<float>>(kXentStatsSize);
    add(
        "loss", "softmax_xent_forward",
        [=](Where where) {
          submit_softmax_xent_forward(z->handle(), label->handle(), stats->handle(), x, where);
        },
        [=] { softmax_xent_forward_cpu(z->f32(), label->i32(), host_stats->data(), x); });
    // The stats are summed through STARPU_REDUX; reading them (as training does every N steps)
    // runs the reduction, outside the timed rounds.
    cases_.back().after_round = [stats] {
      starpu_data_acquire(stats->handle(), STARPU_R);
      starpu_data_release(stats->handle());
    };
    add(
        "loss", "softmax_xent_backward",
        [=](Where where) {
          submit_softmax_xent_backward(z->handle(), label->handle(), dz->handle(), x, batch, where);
        },
        [=] { softmax_xent_backward_cpu(z->f32(), label->i32(), dz->f32(), x, batch); });
  }

  uint32_t batch_;
  std::mt19937 rng_;
  std::vector<std::unique_ptr<Operand>> operands_;
  std::vector<OpCase> cases_;
};

double now_us() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::micro>(clock::now().time_since_epoch()).count();
}

// Microseconds per call of `calls` calls submitted back to back, then waited for.
double time_tasks(const OpCase &op, Where where, int calls) {
  const double start = now_us();
  for (int i = 0; i < calls; ++i) op.submit(where);
  starpu_task_wait_for_all();
  return (now_us() - start) / calls;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Calls per round so that a round lasts about round_us, given one call's estimate.
int calls_per_round(double estimate_us, double round_us) {
  return static_cast<int>(std::clamp(round_us / std::max(estimate_us, 0.01), 3.0, 100000.0));
}

double time_kernel(const OpCase &op, int calls) {
  const double start = now_us();
  for (int i = 0; i < calls; ++i) op.kernel();
  return (now_us() - start) / calls;
}

// The bare kernel's median microseconds per call, timed on the first CPU worker's own thread: the
// core a CPU task runs on, with no idle StarPU worker spinning beside it.
struct KernelTiming {
  const OpCase *op;
  int rounds;
  double round_us;
  double median_us;
};

void time_kernel_on_worker(void *arg) {
  auto *timing = static_cast<KernelTiming *>(arg);
  timing->op->kernel();
  const int calls = calls_per_round(time_kernel(*timing->op, 3), timing->round_us);
  std::vector<double> samples;
  for (int r = 0; r < timing->rounds; ++r) samples.push_back(time_kernel(*timing->op, calls));
  timing->median_us = median(samples);
}

// The same bare kernel timed on several CPU workers at once, each on its own copy of the operands.
struct LoadedTiming {
  std::vector<int> workers;
  std::vector<KernelTiming> timings;  // [i]: workers[i]'s
};

void time_kernel_on_each_worker(void *arg) {
  auto *loaded = static_cast<LoadedTiming *>(arg);
  const int id = starpu_worker_get_id();
  for (size_t i = 0; i < loaded->workers.size(); ++i)
    if (loaded->workers[i] == id) time_kernel_on_worker(&loaded->timings[i]);
}

std::vector<int> worker_ids(starpu_worker_archtype type) {
  std::vector<int> ids(starpu_worker_get_count_by_type(type));
  if (!ids.empty())
    starpu_worker_get_ids_by_type(type, ids.data(), static_cast<unsigned>(ids.size()));
  return ids;
}

// StarPU's executing time per call of the workers of `type`, over one round with profiling on.
double profiled_exec_us(const OpCase &op, Where where, starpu_worker_archtype type, int calls) {
  starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  starpu_profiling_worker_info info;
  const std::vector<int> ids = worker_ids(type);
  for (int id : ids) starpu_profiling_worker_get_info(id, &info);  // reads and resets
  time_tasks(op, where, calls);
  double executing_us = 0.0;
  for (int id : ids) {
    starpu_profiling_worker_get_info(id, &info);
    executing_us += starpu_timing_timespec_to_us(&info.executing_time);
  }
  starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  if (op.after_round) op.after_round();
  return executing_us / calls;
}

struct Result {
  std::string device;
  uint32_t batch;
  std::string layer;
  std::string op;
  double us_per_call;
  double kernel_us;         // NaN where not measured
  double kernel_us_loaded;  // NaN where not measured (--loaded)
  double exec_us;
  int calls;
  int tasks_per_call;
  int workers;
};

// kernel_us_loaded: `copies` (one op case per worker) run on as many CPU workers at once.
double loaded_kernel_us(const std::vector<const OpCase *> &copies, const Options &options) {
  const std::vector<int> cpus = worker_ids(STARPU_CPU_WORKER);
  if (copies.size() > cpus.size())
    throw std::runtime_error("--loaded " + std::to_string(copies.size()) + " needs as many CPU " +
                             "workers, StarPU has " + std::to_string(cpus.size()) +
                             " (set STARPU_NCPU)");
  LoadedTiming loaded;
  for (size_t i = 0; i < copies.size(); ++i) {
    loaded.workers.push_back(cpus[i]);
    loaded.timings.push_back({copies[i], options.rounds, options.round_ms * 1000.0, NAN});
  }
  std::vector<unsigned> ids(loaded.workers.begin(), loaded.workers.end());
  starpu_execute_on_specific_workers(time_kernel_on_each_worker, &loaded, unsigned(ids.size()),
                                     ids.data(), "kernel_us_loaded");
  std::vector<double> medians;
  for (const KernelTiming &t : loaded.timings) medians.push_back(t.median_us);
  return median(medians);
}

Result measure(const OpCase &op, const std::string &device, uint32_t batch, const Options &options,
               bool with_kernel, const std::vector<const OpCase *> &loaded_copies = {}) {
  const bool cuda = device == "cuda";
  const Where where = cuda ? Where::cuda : Where::cpu;
  const starpu_worker_archtype type = cuda ? STARPU_CUDA_WORKER : STARPU_CPU_WORKER;
  const double round_us = options.round_ms * 1000.0;
  Result result{device, batch, op.layer, op.op, 0.0, NAN, NAN, NAN, 0, op.tasks_per_call, 0};
  result.workers = static_cast<int>(worker_ids(type).size());

  // Bare kernel first, while the host buffers are still the valid copies.
  if (with_kernel && op.kernel) {
    KernelTiming timing{&op, options.rounds, round_us, NAN};
    unsigned worker = static_cast<unsigned>(worker_ids(STARPU_CPU_WORKER).at(0));
    starpu_execute_on_specific_workers(time_kernel_on_worker, &timing, 1, &worker, "kernel_us");
    result.kernel_us = timing.median_us;
    if (!loaded_copies.empty()) result.kernel_us_loaded = loaded_kernel_us(loaded_copies, options);
  }

  // Warm-up: data on the device and at least StarPU's 10 calibration runs of the perf model.
  time_tasks(op, where, 12);
  const double estimate = time_tasks(op, where, 5);
  if (op.after_round) op.after_round();
  result.calls = calls_per_round(estimate, round_us);
  std::vector<double> samples;
  for (int r = 0; r < options.rounds; ++r) {
    samples.push_back(time_tasks(op, where, result.calls));
    if (op.after_round) op.after_round();
  }
  result.us_per_call = median(samples);
  result.exec_us = profiled_exec_us(op, where, type, result.calls);
  return result;
}

std::string env_or(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value ? value : fallback;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

// Host name, CPU model and core count, and the name of each CUDA worker's GPU.
std::string machine_description() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string machine = std::string(host) + " " + cpu_model() + " (" +
                        std::to_string(std::thread::hardware_concurrency()) + " cores)";
  for (int id : worker_ids(STARPU_CUDA_WORKER)) {
    char name[256] = {};
    starpu_worker_get_name(id, name, sizeof(name) - 1);
    machine += std::string(" / ") + name;
  }
  return machine;
}

// torch_ops.py's fields, plus ours. threads: one task runs on one thread (OpenBLAS too), as
// torch_ops.py's single thread; workers: StarPU workers of the device's kind.
void print_json(const Result &r, const std::string &machine, const std::string &sched,
                const std::string &math) {
  const std::string starpu = std::to_string(STARPU_MAJOR_VERSION) + "." +
                             std::to_string(STARPU_MINOR_VERSION) + "." +
                             std::to_string(STARPU_RELEASE_VERSION);
  const std::string line = json::Object()
                               .string("engine", "starcnn")
                               .string("starpu", starpu)
                               .string("device", r.device)
                               .integer("batch", r.batch)
                               .string("layer", r.layer)
                               .string("op", r.op)
                               .fixed("us_per_call", r.us_per_call, 2)
                               .fixed("kernel_us", r.kernel_us, 2)
                               .fixed("kernel_us_loaded", r.kernel_us_loaded, 2)
                               .fixed("exec_us", r.exec_us, 2)
                               .integer("calls_per_round", r.calls)
                               .integer("tasks_per_call", r.tasks_per_call)
                               .integer("threads", 1)
                               .integer("workers", r.workers)
                               .string("sched", sched)
                               .string("math", math)
                               .string("openblas_coretype", env_or("OPENBLAS_CORETYPE", "unset"))
                               .string("openblas_l2_size", env_or("OPENBLAS_L2_SIZE", "unset"))
                               .string("openblas_core", blas_kernel_name())
                               .string("machine", machine)
                               .text();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string table_number(double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

void print_table(const std::vector<Result> &results) {
  if (results.empty()) return;
  std::fprintf(stderr, "# %-6s %5s %-6s %-24s %10s %10s %10s %10s\n", "device", "batch", "layer",
               "op", "us/call", "kernel_us", "loaded_us", "exec_us");
  for (const Result &r : results)
    std::fprintf(stderr, "# %-6s %5u %-6s %-24s %10s %10s %10s %10s\n", r.device.c_str(), r.batch,
                 r.layer.c_str(), r.op.c_str(), table_number(r.us_per_call).c_str(),
                 table_number(r.kernel_us).c_str(), table_number(r.kernel_us_loaded).c_str(),
                 table_number(r.exec_us).c_str());
}

int run(const Options &options) {
  const std::string sched = env_or("STARPU_SCHED", "dmda");
  const std::string machine = machine_description();
  std::fprintf(stderr,
               "# op_benchmark: %s; OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s (kernels %s); "
               "STARPU_SCHED=%s, "
               "%u CPU worker(s), %u CUDA worker(s); rounds %d of ~%.0f ms; math %s\n",
               machine.c_str(), env_or("OPENBLAS_CORETYPE", "unset").c_str(),
               env_or("OPENBLAS_L2_SIZE", "unset").c_str(), blas_kernel_name().c_str(),
               sched.c_str(), starpu_cpu_worker_get_count(), starpu_cuda_worker_get_count(),
               options.rounds, options.round_ms, options.math.c_str());
  std::vector<Result> results;
  for (const std::string &device : options.devices) {
    if (device == "cuda") {
#ifdef STARCNN_USE_CUDA
      const bool have_cuda = starpu_cuda_worker_get_count() > 0;
#else
      const bool have_cuda = false;
#endif
      if (!have_cuda) {
        std::fprintf(stderr,
                     "# op_benchmark: no CUDA worker (or built without CUDA): "
                     "skipping CUDA\n");
        continue;
      }
    } else if (starpu_cpu_worker_get_count() == 0) {
      throw std::runtime_error("StarPU has no CPU worker (STARPU_NCPU=0?)");
    }
    for (uint32_t batch : options.batches) {
      const LenetOps ops(batch, batch);
      // Copies of every operand for the loaded kernels, one per worker.
      std::vector<std::unique_ptr<LenetOps>> copies;
      if (device == "cpu" && options.loaded > 1)
        for (int i = 0; i < options.loaded; ++i)
          copies.push_back(std::make_unique<LenetOps>(batch, batch + 1000 + uint32_t(i)));
      for (size_t k = 0; k < ops.cases().size(); ++k) {
        const OpCase &op = ops.cases()[k];
        std::vector<const OpCase *> loaded;
        for (const auto &copy : copies) loaded.push_back(&copy->cases()[k]);
        results.push_back(measure(op, device, batch, options, device == "cpu", loaded));
        print_json(results.back(), machine, sched, options.math);
      }
    }
  }
  print_table(results);
  return 0;
}

}  // namespace
}  // namespace starcnn

int main(int argc, char **argv) {
  starcnn::fix_blas_core("op_benchmark", argv);
  starcnn::Options options;
  try {
    options = starcnn::parse_options(argc, argv);
    starcnn::apply_math_option(options.math);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "op_benchmark: %s\n\n%s", e.what(), starcnn::kUsage);
    return 2;
  }
  // One CPU worker: a CPU figure is one core's. dmda unless asked otherwise: under lws, StarPU's
  // default, a CUDA-only codelet costs about a hundred times more per task.
  setenv("STARPU_NCPU", "1", 0);
  setenv("STARPU_SCHED", "dmda", 0);
  starcnn::set_starpu_defaults();
  if (starpu_init(nullptr) != 0) {
    std::fprintf(stderr, "op_benchmark: starpu_init failed\n");
    return 1;
  }
  starcnn::start_codelet_resources();
  int status = 1;
  try {
    status = starcnn::run(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "op_benchmark: %s\n", e.what());
    starpu_task_wait_for_all();
  }
  starcnn::stop_codelet_resources();
  starpu_shutdown();
  return status;
}
