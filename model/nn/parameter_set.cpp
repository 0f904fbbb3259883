#include "model/nn/parameter_set.h"

#include "codelets/accumulate.h"
#include "codelets/sum_packed.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace starcnn {

ParameterSet::ParameterSet(const NetworkSpec &spec, const NetworkPlanText &plans,
                           const MachineWorkers &workers)
    : home_(home_of(plans, workers)), cpu_workers_(workers.cpu) {
  for (const LayerSpec &layer : spec.layers)
    if (layer.kind == LayerKind::conv) {
      SplitPlan plan;
      try {
        plan = parse_split_plan(plans.plan_for(layer.name), layer.out, workers);
      } catch (const std::invalid_argument &e) {
        throw std::invalid_argument(layer.name + ": " + e.what());
      }
      conv_plans_[layer.name] = plan;
    }
  for (const auto &[name, plan] : plans.overrides)
    if (!conv_plans_.count(name))
      throw std::invalid_argument("split plan names layer '" + name +
                                  "', which is not a convolution of the network");
  for (const ParameterSpec &p : parameter_tensors(spec)) {
    const std::string layer = p.name.substr(0, p.name.rfind('.'));
    std::vector<int> shape(p.shape.begin(), p.shape.end());
    const auto plan = conv_plans_.find(layer);
    std::vector<int> part_rows;
    if (plan != conv_plans_.end())
      for (const SplitPart &part : plan->second.parts) part_rows.push_back(part.filters);
    params_.push_back(std::make_unique<Parameter>(p.name, shape, part_rows));
  }
}

Parameter &ParameterSet::get(const std::string &name) {
  for (auto &p : params_)
    if (p->name() == name) return *p;
  throw std::invalid_argument("no parameter named " + name);
}

void ParameterSet::initialize(uint64_t seed) {
  std::mt19937_64 gen(seed);
  for (size_t i = 0; i + 1 < params_.size(); i += 2) {
    Parameter &weight = *params_[i], &bias = *params_[i + 1];
    const size_t fan_in = weight.size() / size_t(weight.shape()[0]);
    const float bound = 1.0f / std::sqrt(float(fan_in));
    std::uniform_real_distribution<float> dist(-bound, bound);
    for (Parameter *p : {&weight, &bias}) {
      std::vector<float> values(p->size());
      for (float &v : values) v = dist(gen);
      p->write(values);
    }
  }
}

std::vector<NamedTensor> ParameterSet::read(bool momentum) const {
  submit_held_update();
  std::vector<NamedTensor> tensors;
  for (const auto &p : params_)
    tensors.push_back({p->name(), std::vector<int64_t>(p->shape().begin(), p->shape().end()),
                       momentum ? p->read_momentum() : p->read()});
  return tensors;
}

void ParameterSet::write(const std::vector<NamedTensor> &tensors, bool momentum) {
  submit_held_update();
  for (const NamedTensor &t : tensors) {
    Parameter &p = get(t.name);
    if (momentum)
      p.write_momentum(t.values);
    else
      p.write(t.values);
  }
}

Where ParameterSet::part_where(const Parameter &p, size_t part) const {
  const auto conv = conv_plans_.find(p.name().substr(0, p.name().rfind('.')));
  return conv != conv_plans_.end() ? conv->second.parts[part].where : home_;
}

void ParameterSet::use_grad_slots(size_t slots) {
  grad_slots_ = std::max(grad_slots_, slots);
  for (auto &p : params_) p->add_grad_slots(grad_slots_);
}

void ParameterSet::submit_sum_grads(size_t slots, const std::vector<size_t> &cpu_slots,
                                    const std::vector<Where> &cpu_slot_workers) {
  if (slots > grad_slots_)
    throw std::invalid_argument("summing " + std::to_string(slots) + " gradient slots of " +
                                std::to_string(grad_slots_));
  std::vector<bool> on_cpu(slots, false);
  for (size_t slot : cpu_slots) {
    if (slot == 0 || slot >= slots)
      throw std::invalid_argument("CPU gradient slot " + std::to_string(slot) + " of " +
                                  std::to_string(slots) + " (slot 0 is the sum)");
    on_cpu[slot] = true;
  }
  if (!cpu_slot_workers.empty() && cpu_slot_workers.size() != cpu_slots.size())
    throw std::invalid_argument("submit_sum_grads: " + std::to_string(cpu_slot_workers.size()) +
                                " workers for " + std::to_string(cpu_slots.size()) + " CPU slots");
  if (host_grads_ && !cpu_slots.empty()) {
    // The CPU slots, every parameter's, into the packed vector the update adds in; the others
    // into slot 0 where the update runs.
    std::vector<std::vector<starpu_data_handle_t>> groups;
    for (auto &p : params_) {
      std::vector<starpu_data_handle_t> cpu, others;
      for (size_t slot = 1; slot < slots; ++slot)
        (on_cpu[slot] ? cpu : others).push_back(p->grad(0, slot).handle());
      groups.push_back(cpu);
      if (others.empty()) continue;
      if (device_grads_from_chain_)  // slot 0's chain writes device_grads_, not the parameters
        throw std::logic_error("submit_sum_grads: a second micro-batch beside the CUDA chain");
      submit_add_all(p->grad(0).handle(), others, part_where(*p, 0));
    }
    if (grad_sum_ != GradSum::slices)
      submit_added_sum(cpu_slots, cpu_slot_workers);
    else if (host_grad_slices_)
      submit_sliced_sum(groups);
    else
      submit_sum_packed(groups, host_grads_->handle(), Where::cpu);
    // The update side's own gradients, packed for the host's update (unless its chain did).
    if (device_grads_ && !device_grads_from_chain_) {
      std::vector<std::vector<starpu_data_handle_t>> own;
      for (auto &p : params_) own.push_back({p->grad(0).handle()});
      submit_sum_packed(own, device_grads_->handle(), part_where(*params_[0], 0));
    }
    host_grads_pending_ = true;
    return;
  }
  for (auto &p : params_)
    for (size_t part = 0; part < p->part_count(); ++part) {
      const Where where = part_where(*p, part);
      const bool presum = cpu_slots.size() >= 2 && kind_of(where) != Where::cpu;
      std::vector<starpu_data_handle_t> others, cpu_others;
      for (size_t slot = 1; slot < slots; ++slot) {
        const bool folded = presum && on_cpu[slot] && slot != cpu_slots.front();
        (folded ? cpu_others : others).push_back(p->grad(part, slot).handle());
      }
      if (!cpu_others.empty())
        submit_add_all(p->grad(part, cpu_slots.front()).handle(), cpu_others, Where::cpu);
      if (!others.empty()) submit_add_all(p->grad(part).handle(), others, where);
    }
}

void ParameterSet::submit_sliced_sum(const std::vector<std::vector<starpu_data_handle_t>> &groups) {
  PackedSlices &slices = *host_grad_slices_;
  slices.submit_cut();
  size_t g = 0, group_first = 0;  // the first group slice s overlaps, and where it starts
  for (size_t s = 0; s < slices.count(); ++s) {
    const size_t first = slices.first(s), end = first + slices.length(s);
    while (group_first + params_[g]->size() <= first) group_first += params_[g++]->size();
    std::vector<std::vector<starpu_data_handle_t>> overlapping;
    for (size_t h = g, start = group_first; start < end; start += params_[h++]->size())
      overlapping.push_back(groups[h]);
    // Each slice on a CPU worker of its own past worker 0 (the batches' loader), where a chain
    // just ended: left to dmda, the 7 slices of MNIST lenet's sum started one at a time, 20-40 us
    // apart, two workers taking two (perf/results/h100-2026-12-06-f).
    const int worker = 1 + int(s);
    const bool pin = pin_sum_slices_ && worker < cpu_workers_;
    submit_sum_packed_slice(overlapping, slices.slice(s), first - group_first,
                            pin ? cpu_worker(worker) : Where::cpu);
  }
  slices.submit_join();
}

void ParameterSet::submit_added_sum(const std::vector<size_t> &cpu_slots,
                                    const std::vector<Where> &cpu_slot_workers) {
  // The slices began when the last chain ended, and the GPU's update waited for them: under the
  // MPS cap MNIST lenet b256's chains ended over 0.5 ms, the slices took 0.3 ms after the last
  // (perf/results/h100-2026-12-06-f). Adds in commute mode leave only the last chain's add.
  submit_zero_fill(host_grads_->handle(), Where::cpu);
  for (size_t k = 0; k < cpu_slots.size(); ++k) {
    std::vector<starpu_data_handle_t> grads;
    const auto packed = chain_grads_.find(cpu_slots[k]);  // written by the slot's chain
    if (packed != chain_grads_.end())
      grads.push_back(packed->second.handle());
    else
      for (auto &p : params_) grads.push_back(p->grad(0, cpu_slots[k]).handle());
    submit_add_packed(grads, host_grads_->handle(),
                      k < cpu_slot_workers.size() ? cpu_slot_workers[k] : Where::cpu,
                      STARPU_MAX_PRIO);
  }
}

namespace {

// The CPU chains' gradients are summed in slices of this many floats or more, at most
// kMaxSumSlices, one CPU worker each: one task for lenet's 62 K floats took ~0.2 ms of a sample
// split's step, its other CPU workers idle. STARCNN_SUM_SLICES=N asks for N (1: one task).
constexpr size_t kMinSliceFloats = 8192, kMaxSumSlices = 8;

size_t sum_slices(size_t floats, int cpu_workers) {
  if (const char *value = std::getenv("STARCNN_SUM_SLICES")) {
    char *end = nullptr;
    const unsigned long asked = std::strtoul(value, &end, 10);
    if (*value == '\0' || *end != '\0' || asked == 0 || asked > floats)
      throw std::invalid_argument("STARCNN_SUM_SLICES must be a count from 1 to " +
                                  std::to_string(floats) + ", got '" + value + "'");
    return asked;
  }
  return std::max<size_t>(
      1, std::min({floats / kMinSliceFloats, kMaxSumSlices, size_t(std::max(1, cpu_workers))}));
}

// The environment's choice `name` among `allowed`, `fallback` where unset (and accepted as set);
// throws std::invalid_argument naming the choices otherwise.
std::string env_choice(const char *name, const std::string &fallback,
                       const std::vector<std::string> &allowed) {
  const char *value = std::getenv(name);
  const std::string choice = value ? value : fallback;
  if (choice == fallback || std::find(allowed.begin(), allowed.end(), choice) != allowed.end())
    return choice;
  std::string choices;
  for (size_t i = 0; i < allowed.size(); ++i)
    choices += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
  throw std::invalid_argument(std::string(name) + " must be " + choices + ", got '" + choice + "'");
}

}  // namespace

size_t ParameterSet::one_side_floats() const {
  size_t total = 0;
  for (const auto &p : params_) {
    if (p->part_count() != 1 || part_where(*p, 0) != part_where(*params_[0], 0)) return 0;
    total += p->size();
  }
  return total;
}

bool ParameterSet::use_host_mirror() {
  // One SGD task updates every vector, off the CPU workers (CUDA, or any worker where the
  // scheduler picks), in params_ order: the packed vectors' layout.
  const size_t total = one_side_floats();
  if (total == 0 || kind_of(part_where(*params_[0], 0)) == Where::cpu) return false;
  if (!host_weights_) {
    // The environment's choices first: a refused one leaves no half-made mirror.
    const std::string update = env_choice("STARCNN_MIRROR_UPDATE", "", {"both", "copy"});
    const std::string sum_mode =
        env_choice("STARCNN_CPU_GRAD_SUM", "packed", {"packed", "add", "slices"});
    // The CUDA chain writes its gradients packed too (chain_grads); STARCNN_CUDA_PACKED_GRADS=0
    // keeps the packing task on the GPU, to compare.
    const std::string cuda_grads = env_choice("STARCNN_CUDA_PACKED_GRADS", "1", {"0", "1"});
    const size_t slices = sum_slices(total, cpu_workers_);
    // STARCNN_PIN_SUM_SLICES=0 leaves the slices to the scheduler (to compare).
    const char *pin = std::getenv("STARCNN_PIN_SUM_SLICES");
    pin_sum_slices_ = pin == nullptr || std::string(pin) != "0";
    cuda_packed_grads_ = cuda_grads == "1";
    grad_sum_ = sum_mode == "packed" ? GradSum::packed
                : sum_mode == "add"  ? GradSum::add
                                     : GradSum::slices;
    host_weights_.emplace(std::vector<int>{int(total)}, "host_weights");
    host_grads_.emplace(std::vector<int>{int(total)}, "host_grads");
    if (update != "copy") {
      host_momenta_.emplace(std::vector<int>{int(total)}, "host_momenta");
      device_grads_.emplace(std::vector<int>{int(total)}, "device_grads");
    }
    if (slices > 1 && grad_sum_ == GradSum::slices)
      host_grad_slices_ = std::make_unique<PackedSlices>(host_grads_->handle(), slices);
  }
  return true;
}

size_t ParameterSet::host_offset(const Parameter &p) const {
  size_t offset = 0;
  for (const auto &q : params_) {
    if (q.get() == &p) return offset;
    offset += q->size();
  }
  throw std::invalid_argument("host_offset: " + p.name() + " is not of this parameter set");
}

const Tensor *ParameterSet::chain_grads(size_t slot, bool cuda) {
  if (!host_grads_ || grad_sum_ != GradSum::packed) return nullptr;
  if (cuda) {
    if (slot != 0 || !device_grads_ || !cuda_packed_grads_) return nullptr;
    // cuDNN writes a filter gradient at its offset in the packed vector: only where every one
    // starts 16-byte aligned, 4 floats (cuDNN asks 4 bytes at least; its faster kernels may want
    // more).
    for (const auto &[layer, plan] : conv_plans_)
      if (host_offset(get(layer + ".weight")) % 4 != 0) return nullptr;
    device_grads_from_chain_ = true;
    return &*device_grads_;
  }
  if (slot == 0) return nullptr;  // the update side's own: its parameters' gradients
  if (slot >= grad_slots_)
    throw std::invalid_argument("chain_grads: CPU gradient slot " + std::to_string(slot) + " of " +
                                std::to_string(grad_slots_));
  auto found = chain_grads_.find(slot);
  if (found == chain_grads_.end())
    found = chain_grads_
                .emplace(slot, Tensor(std::vector<int>{int(host_grads_->size())},
                                      "chain_grads." + std::to_string(slot)))
                .first;
  return &found->second;
}

void ParameterSet::submit_pack_weights() {
  submit_held_update();
  if (!host_weights_) return;
  std::vector<std::vector<starpu_data_handle_t>> weights, momenta;
  for (auto &p : params_) {
    weights.push_back({p->value(0).handle()});
    momenta.push_back({p->momentum(0).handle()});
  }
  submit_sum_packed(weights, host_weights_->handle(), Where::cpu);
  if (host_momenta_) submit_sum_packed(momenta, host_momenta_->handle(), Where::cpu);
}

namespace {

// A CPU side's update of this many floats or more runs as one task per layer (weight and bias):
// wide's 1.2 M took 2.6 ms as one task on one core (H200), while every other worker waited for
// it at the end of the step; per layer, the deep layers' updates run while the other networks
// are still in their backward, and the next step waits only for the first layer's. Smaller
// updates (lenet's 62 K) stay one task. STARCNN_CPU_UPDATE=one keeps one task (to compare).
constexpr size_t kSplitUpdateFloats = 256 * 1024;

bool split_cpu_updates() {
  static const bool split = [] {
    const char *value = std::getenv("STARCNN_CPU_UPDATE");
    return value == nullptr || std::string(value) != "one";
  }();
  return split;
}

std::string layer_of(const Parameter &p) {
  return p.name().substr(0, p.name().rfind('.'));
}

}  // namespace

bool ParameterSet::use_cpu_packed_sum() {
  if (host_grads_) return !host_weights_;  // already on, or the host mirror's
  if (env_choice("STARCNN_CPU_ONLY_SUM", "flat", {"flat", "packed"}) != "packed") return false;
  const size_t total = one_side_floats();
  if (total == 0 || kind_of(part_where(*params_[0], 0)) != Where::cpu ||
      total >= kSplitUpdateFloats)
    return false;
  grad_sum_ = GradSum::packed;
  host_grads_.emplace(std::vector<int>{int(total)}, "host_grads");
  return true;
}

bool ParameterSet::updates_per_layer(Where where, size_t floats) const {
  return kind_of(where) == Where::cpu && !host_grads_ && floats >= kSplitUpdateFloats &&
         split_cpu_updates();
}

bool ParameterSet::use_update_fold(Where side) {
  const size_t total = one_side_floats();
  if (total == 0) return false;
  const Where where = part_where(*params_[0], 0);
  if (kind_of(where) != kind_of(side) || updates_per_layer(where, total)) return false;
  if (host_grads_ && (!host_weights_ || !host_momenta_ || grad_sum_ == GradSum::slices))
    return false;  // a CPU plan's packed sum, the weights coming back, or the sum's slices
  if (host_grads_ && !other_host_grads_)
    other_host_grads_.emplace(std::vector<int>{int(total)}, "host_grads.other");
  if (device_grads_from_chain_ && !other_device_grads_)
    other_device_grads_.emplace(std::vector<int>{int(total)}, "device_grads.other");
  fold_side_ = where;
  return true;
}

starpu_data_handle_t ParameterSet::device_grads_to_write() const {
  return device_grads_from_chain_ ? device_grads_->handle() : nullptr;
}

void ParameterSet::stop_update_fold() {
  submit_held_update();
  fold_side_.reset();
}

std::optional<ParameterSet::FoldedUpdate> ParameterSet::take_folded_update() {
  if (!held_) return std::nullopt;
  const FoldedUpdate folded{held_->params, held_->packed.extra_grads, held_->packed.grads};
  held_.reset();
  return folded;
}

void ParameterSet::submit_held_update() const {
  if (!held_) return;
  const HeldUpdate held = std::move(*held_);
  held_.reset();
  submit_sgd_update(held.vectors, held.params, held.where, 0, held.packed);
}

void ParameterSet::submit_update(const SgdParams &params) {
  submit_held_update();  // a step whose chain did not take it
  // One task per side: every vector that must stay on the CPU, on CUDA, or may go anywhere.
  struct Side {
    std::vector<SgdHandles> vectors;
    std::vector<std::string> layers;  // each vector's layer
    size_t floats = 0;
  };
  std::map<Where, Side> by_side;
  for (auto &p : params_)
    for (size_t part = 0; part < p->part_count(); ++part) {
      Side &side = by_side[part_where(*p, part)];
      side.vectors.push_back({p->value(part).handle(), p->grad(part).handle(),
                              params.momentum != 0.0f ? p->momentum(part).handle() : nullptr});
      side.layers.push_back(layer_of(*p));
      side.floats += p->value(part).size();
    }
  // With the mirror, or a CPU plan's packed sum, every vector is on one side, in the packed
  // vectors' order (one_side_floats): the summed CPU chains' gradients are added in.
  SgdPacked packed;
  if (host_grads_pending_) packed.extra_grads = host_grads_->handle();
  if (host_weights_) {
    // Both sides update from the same gradients only where this step's were summed and packed;
    // otherwise the new weights come back.
    const bool both = host_momenta_ && host_grads_pending_;
    if (!both) packed.weights_copy = host_weights_->handle();
    if (device_grads_from_chain_) packed.grads = device_grads_->handle();
    if (both)
      submit_sgd_update({{host_weights_->handle(), device_grads_->handle(),
                          params.momentum != 0.0f ? host_momenta_->handle() : nullptr}},
                        params, Where::cpu, 0, {host_grads_->handle(), nullptr});
  }
  host_grads_pending_ = false;
  for (const auto &[where, side] : by_side) {
    if (!updates_per_layer(where, side.floats)) {
      if (fold_side_ == where && !packed.weights_copy)
        held_ = HeldUpdate{side.vectors, params, where, packed};
      else
        submit_sgd_update(side.vectors, params, where, 0, packed);
      continue;
    }
    for (size_t first = 0, last = 0; first < side.vectors.size(); first = last) {
      while (last < side.vectors.size() && side.layers[last] == side.layers[first]) ++last;
      submit_sgd_update({side.vectors.begin() + long(first), side.vectors.begin() + long(last)},
                        params, where);
    }
  }
  // The next step's CPU adds go to the other vector while the chain reads this one, and the
  // next CUDA chain writes the other gradients while the host's update reads these.
  if (fold_side_ && other_host_grads_) std::swap(host_grads_, other_host_grads_);
  if (fold_side_ && other_device_grads_) std::swap(device_grads_, other_device_grads_);
}

}  // namespace starcnn
