#include "codelets/support/simulated_models.h"

#include <cmath>

namespace starcnn {

double expected_order_statistic_of_normals(unsigned k, unsigned n) {
  if (k < 1 || k > n || n <= 1) return 0;
  // The trapezoid rule over [-12, 12] (the integrand is below 1e-30 beyond), where the integrand
  // is smooth: 1e-3 steps give 1e-9 accuracy. The binomial factor through lgamma (no overflow).
  constexpr double lo = -12, hi = 12, step = 1e-3;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
  const double factor = std::exp(std::log(double(n)) + std::lgamma(double(n)) -
                                 std::lgamma(double(k)) - std::lgamma(double(n - k + 1)));
  double sum = 0;
  for (double x = lo; x <= hi + step / 2; x += step) {
    const double phi = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double below = 0.5 * std::erfc(-x / std::sqrt(2.0)),
                 above = 0.5 * std::erfc(x / std::sqrt(2.0));
    const double weight = (x == lo || x + step > hi + step / 2) ? 0.5 : 1.0;
    sum +=
        weight * x * factor * phi * std::pow(below, double(k - 1)) * std::pow(above, double(n - k));
  }
  return sum * step;
}

}  // namespace starcnn

#ifdef STARPU_SIMGRID

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace starcnn {
namespace {

// No lock: under SimGrid, StarPU's threads are SimGrid actors that run one at a time, and a real
// mutex held across a StarPU call that yields to another actor would stall the simulation.
bool estimates_on = false;
bool overheads_on = false;
bool chain_spread_on = false;
// The CPU chain tasks of the step being submitted; its draws (a pinned chain's worker, else the
// chain itself) in order of their first chain, and the last step's count of them; each chain
// task's draw (0 first), by task (a freed task's entry is overwritten when its address comes back).
constexpr const char *kChainSymbol = "starcnn_cpu_chain";
unsigned chains_submitting = 0, draws_per_step = 0;
std::map<long, unsigned> step_draws;
std::unordered_map<const starpu_task *, unsigned> chain_draw;
TaskOverheads overheads;
std::map<std::string, starpu_perfmodel *> histories;  // by symbol; null: no history file
std::set<std::string> estimated;

const char *kind_name(const starpu_perfmodel_arch *arch) {
  return arch->devices[0].type == STARPU_CUDA_WORKER ? "cuda" : "cpu";
}

// The footprint and data size StarPU keys a history entry by (no starcnn model has a size_base).
uint32_t footprint_of(starpu_task *task) {
  starpu_perfmodel *model = task->cl->model;
  return model->footprint ? model->footprint(task) : starpu_task_data_footprint(task);
}
size_t data_size_of(starpu_task *task) {
  size_t size = 0;
  for (unsigned i = 0; i < STARPU_TASK_GET_NBUFFERS(task); ++i)
    size += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
  return size;
}

// The history file of `symbol`, loaded apart from the codelet's own (switched) model.
starpu_perfmodel *history_of(const char *symbol) {
  auto found = histories.find(symbol);
  if (found != histories.end()) return found->second;
  auto *model = new starpu_perfmodel;  // kept for the program's life, as StarPU keeps its own
  std::memset(model, 0, sizeof(*model));
  if (starpu_perfmodel_load_symbol(symbol, model) != 0) {
    delete model;
    model = nullptr;
  }
  histories[symbol] = model;
  return model;
}

// A history entry's time: its mean and standard deviation, in microseconds.
struct Time {
  double mean = NAN, dev = 0;
};

// The time of the entry of `footprint` in `symbol`'s history for `arch`, else one estimated by
// data size from its other entries (see use_simulated_costs), its deviation in the same
// proportion to its mean as the nearest entry's; NaN without any entry.
Time history_time(const char *symbol, starpu_perfmodel_arch *arch, unsigned nimpl,
                  uint32_t footprint, size_t size, bool *estimated_it) {
  // Without estimates only the task's own entry counts (check_simulated_task names a missing one).
  starpu_perfmodel *history = history_of(symbol);
  starpu_perfmodel_per_arch *per_arch =
      history ? starpu_perfmodel_get_model_per_arch(history, arch, nimpl) : nullptr;
  if (!per_arch) return {};
  // The nearest entries below and above `size`, and the largest but one (for the slope beyond).
  const starpu_perfmodel_history_entry *below = nullptr, *above = nullptr, *next = nullptr;
  for (starpu_perfmodel_history_list *l = per_arch->list; l; l = l->next) {
    const starpu_perfmodel_history_entry *e = l->entry;
    if (!e || e->nsample == 0 || !std::isfinite(e->mean)) continue;
    if (e->footprint == footprint) return {e->mean, e->deviation};
    if (!estimates_on) continue;
    if (e->size <= size && (!below || e->size > below->size)) {
      if (below && below->size < e->size) next = below;
      below = e;
    } else if (e->size <= size && (!next || e->size > next->size) && e != below) {
      next = e;
    }
    if (e->size >= size && (!above || e->size < above->size)) above = e;
  }
  if (!below && !above) return {};
  *estimated_it = true;
  const auto with_dev_of = [](double mean, const starpu_perfmodel_history_entry *nearest) {
    return Time{mean, nearest->mean > 0 ? mean * nearest->deviation / nearest->mean : 0};
  };
  const auto line = [size](const starpu_perfmodel_history_entry *a,
                           const starpu_perfmodel_history_entry *b) {
    return a->mean + (b->mean - a->mean) * (double(size) - double(a->size)) /
                         (double(b->size) - double(a->size));
  };
  if (below && above && above->size > below->size)
    return with_dev_of(line(below, above),
                       size - below->size <= above->size - size ? below : above);
  // Beyond the largest entry, the line through the two largest (never below the largest's time:
  // small tasks are bound by their launch, not their bytes); below the smallest, its time.
  if (below && next && below->size > next->size)
    return with_dev_of(std::max(below->mean, line(next, below)), below);
  return with_dev_of(below ? below->mean : above->mean, below ? below : above);
}

// An op never run on a kind of worker (merge and split on CUDA, where no calibrated plan split
// filters there) is timed as add_into, the elementwise pass over the same bytes.
constexpr const char *kProxySymbol = "starcnn_add_into";

double estimate_cost(starpu_task *task, starpu_perfmodel_arch *arch, unsigned nimpl) {
  const char *symbol = task->cl->model->symbol;
  const size_t size = data_size_of(task);
  bool estimated_it = false;
  Time time = history_time(symbol, arch, nimpl, footprint_of(task), size, &estimated_it);
  std::string how;
  if (std::isnan(time.mean) && std::strcmp(symbol, kProxySymbol) != 0) {
    time = history_time(kProxySymbol, arch, nimpl, 0, size, &estimated_it);
    how = " (as " + std::string(kProxySymbol) + ")";
  }
  double us = time.mean;
  // The k-th of a step's n draws (charge_chain_spread); before a step has ended its run of chains
  // (the first), n is the run's so far.
  const unsigned draws = std::max(draws_per_step, unsigned(step_draws.size()));
  if (chain_spread_on && draws > 1 && std::strcmp(symbol, kChainSymbol) == 0 &&
      arch->devices[0].type == STARPU_CPU_WORKER && std::isfinite(us)) {
    const auto draw = chain_draw.find(task);
    const unsigned k = draw == chain_draw.end() ? draws : std::min(draw->second + 1, draws);
    us += time.dev * expected_order_statistic_of_normals(k, draws);
    if (overheads_on) us += double(k - 1) * overheads.parallel_cpu_us;
  }
  if (estimated_it && !std::isnan(us))
    estimated.insert(std::string(symbol) + " on " + kind_name(arch) + ", " + std::to_string(size) +
                     " bytes" + how);
  if (overheads_on && !std::isnan(us))
    us += arch->devices[0].type == STARPU_CUDA_WORKER ? overheads.cuda_us : overheads.cpu_us;
  return us;
}

// The function the simulation runs for a codelet of time_internal_tasks: its task's cost, slept.
void sleep_through_cost(void *[], void *) {
  starpu_task *task = starpu_task_get_current();
  starpu_perfmodel_arch *arch =
      starpu_worker_get_perf_archtype(starpu_worker_get_id(), task->sched_ctx);
  const double us = starpu_task_expected_length(task, arch, 0);
  if (us > 0) starpu_sleep(float(us * 1e-6));
}

// Counts the CPU chain tasks a step submits together (a run of them, batch loads apart, ended by a
// task of another op: the step's gradient sums) and gives each its draw: the chains pinned to one
// worker share it (a slow worker is slow for each of its chains, every step alike in the traces
// of README "Plans"), any other chain has one of its own.
void count_chains(starpu_task *task) {
  const char *symbol = task->cl->model ? task->cl->model->symbol : "";
  if (std::strcmp(symbol, kChainSymbol) == 0) {
    const long key =
        task->execute_on_a_specific_worker ? long(task->workerid) : -1 - long(chains_submitting);
    ++chains_submitting;
    chain_draw[task] = step_draws.emplace(key, unsigned(step_draws.size())).first->second;
  } else if (std::strcmp(symbol, "starcnn_load_batch") != 0 &&
             std::strncmp(symbol, "starcnn_cuda_chain", 18) != 0 && chains_submitting > 0) {
    draws_per_step = unsigned(step_draws.size());
    step_draws.clear();
    chains_submitting = 0;
  }
}

}  // namespace

void time_internal_tasks(starpu_codelet &codelet) {
  codelet.flags |= STARPU_CODELET_SIMGRID_EXECUTE;
  if (codelet.cpu_funcs[0]) codelet.cpu_funcs[0] = sleep_through_cost;
  if (codelet.cuda_funcs[0]) {
    codelet.cuda_funcs[0] = sleep_through_cost;
    codelet.cuda_flags[0] = 0;  // the simulation runs only synchronous functions
  }
}

void estimate_missing_shapes() {
  estimates_on = true;
}

void charge_chain_spread() {
  chain_spread_on = true;
}

void charge_task_overheads(const TaskOverheads &measured) {
  overheads = measured;
  overheads_on = true;
}

void charge_submit_cost() {
  constexpr double starpu_own_us = 1;  // STARPU_SIMGRID_TASK_SUBMIT_COST's sleep
  if (overheads_on && overheads.submit_us > starpu_own_us)
    starpu_sleep(float((overheads.submit_us - starpu_own_us) * 1e-6));
}

void use_simulated_costs(starpu_codelet &codelet) {
  starpu_perfmodel *model = codelet.model;
  if (!model || model->type != STARPU_HISTORY_BASED) return;
  model->type = STARPU_PER_ARCH;
  model->arch_cost_function = estimate_cost;
}

std::vector<std::string> estimated_shapes() {
  return {estimated.begin(), estimated.end()};
}

void check_simulated_task(starpu_task *task, const char *op) {
  const bool estimates = estimates_on;
  if (estimates || overheads_on || chain_spread_on) use_simulated_costs(*task->cl);
  if (chain_spread_on) count_chains(task);
  bool checked[STARPU_NARCH] = {};
  const unsigned workers = starpu_worker_get_count();
  for (unsigned w = 0; w < workers; ++w) {
    const starpu_worker_archtype type = starpu_worker_get_type(int(w));
    const bool allowed =
        task->execute_on_a_specific_worker
            ? task->workerid == w
            : (task->where & (type == STARPU_CUDA_WORKER ? STARPU_CUDA : STARPU_CPU)) != 0;
    if (!allowed || checked[type] || !starpu_worker_can_execute_task(w, task, 0)) continue;
    checked[type] = true;
    starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(int(w), task->sched_ctx);
    const double us = starpu_task_expected_length(task, arch, 0);
    if (std::isnan(us) || us <= 0) {
      char footprint[16];
      std::snprintf(footprint, sizeof(footprint), "%08x", footprint_of(task));
      task->destroy = 0;  // never submitted: freed here
      starpu_task_destroy(task);
      throw std::runtime_error(
          std::string("the perf models have no calibrated time of ") + op + " (footprint " +
          footprint + ") on " + (type == STARPU_CUDA_WORKER ? "CUDA" : "CPU") + " workers" +
          (estimates ? ", nor any of its shapes to estimate it from" : "") +
          ": run this network, batch and plan once on the calibrated machine (it records the "
          "shapes it runs)" +
          (estimates ? "" : ", or let simulate estimate the shapes it lacks (--estimate)"));
    }
  }
}

}  // namespace starcnn

#endif
