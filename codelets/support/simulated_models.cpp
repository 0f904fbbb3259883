#include "codelets/support/simulated_models.h"

#ifdef STARPU_SIMGRID

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace starcnn {
namespace {

// No lock: under SimGrid, StarPU's threads are SimGrid actors that run one at a time, and a real
// mutex held across a StarPU call that yields to another actor would stall the simulation.
bool estimates_on = false;
bool overheads_on = false;
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

// The time of the entry of `footprint` in `symbol`'s history for `arch`, else one estimated by
// data size from its other entries (see use_simulated_costs); NaN without any entry.
double history_time(const char *symbol, starpu_perfmodel_arch *arch, unsigned nimpl,
                    uint32_t footprint, size_t size, bool *estimated_it) {
  // Without estimates only the task's own entry counts (check_simulated_task names a missing one).
  starpu_perfmodel *history = history_of(symbol);
  starpu_perfmodel_per_arch *per_arch =
      history ? starpu_perfmodel_get_model_per_arch(history, arch, nimpl) : nullptr;
  if (!per_arch) return NAN;
  // The nearest entries below and above `size`, and the largest but one (for the slope beyond).
  const starpu_perfmodel_history_entry *below = nullptr, *above = nullptr, *next = nullptr;
  for (starpu_perfmodel_history_list *l = per_arch->list; l; l = l->next) {
    const starpu_perfmodel_history_entry *e = l->entry;
    if (!e || e->nsample == 0 || !std::isfinite(e->mean)) continue;
    if (e->footprint == footprint) return e->mean;
    if (!estimates_on) continue;
    if (e->size <= size && (!below || e->size > below->size)) {
      if (below && below->size < e->size) next = below;
      below = e;
    } else if (e->size <= size && (!next || e->size > next->size) && e != below) {
      next = e;
    }
    if (e->size >= size && (!above || e->size < above->size)) above = e;
  }
  if (!below && !above) return NAN;
  *estimated_it = true;
  const auto line = [size](const starpu_perfmodel_history_entry *a,
                           const starpu_perfmodel_history_entry *b) {
    return a->mean + (b->mean - a->mean) * (double(size) - double(a->size)) /
                         (double(b->size) - double(a->size));
  };
  if (below && above && above->size > below->size) return line(below, above);
  // Beyond the largest entry, the line through the two largest (never below the largest's time:
  // small tasks are bound by their launch, not their bytes); below the smallest, its time.
  if (below && next && below->size > next->size) return std::max(below->mean, line(next, below));
  return below ? below->mean : above->mean;
}

// An op never run on a kind of worker (merge and split on CUDA, where no calibrated plan split
// filters there) is timed as add_into, the elementwise pass over the same bytes.
constexpr const char *kProxySymbol = "starcnn_add_into";

double estimate_cost(starpu_task *task, starpu_perfmodel_arch *arch, unsigned nimpl) {
  const char *symbol = task->cl->model->symbol;
  const size_t size = data_size_of(task);
  bool estimated_it = false;
  double us = history_time(symbol, arch, nimpl, footprint_of(task), size, &estimated_it);
  std::string how;
  if (std::isnan(us) && std::strcmp(symbol, kProxySymbol) != 0) {
    us = history_time(kProxySymbol, arch, nimpl, 0, size, &estimated_it);
    how = " (as " + std::string(kProxySymbol) + ")";
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
  bool estimates = false;
  { estimates = estimates_on; }
  if (estimates || overheads_on) use_simulated_costs(*task->cl);
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
