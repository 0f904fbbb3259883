// The trainable state of a network: every parameter in PyTorch's state_dict order, each
// convolution's cut into the parts of its split plan. Networks of any batch size built on one
// ParameterSet share it.
#pragma once

#include "codelets/sgd.h"
#include "model/io/safetensors.h"
#include "model/nn/conv_layer.h"
#include "model/nn/network_spec.h"
#include "model/nn/packed_slices.h"
#include "model/nn/parameter.h"
#include "partition/split_plan.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace starcnn {

class ParameterSet {
 public:
  // Throws std::invalid_argument when a layer's plan does not parse or does not fit the machine.
  ParameterSet(const NetworkSpec &spec, const NetworkPlanText &plans,
               const MachineWorkers &workers);

  std::vector<std::unique_ptr<Parameter>> &all() { return params_; }
  // Where the ops and updates that the convolutions' parts do not place run (home_of()).
  Where home() const { return home_; }
  Parameter &get(const std::string &name);
  const SplitPlan &conv_plan(const std::string &layer) const { return conv_plans_.at(layer); }

  // PyTorch's default initialisation of Conv2d and Linear: weight and bias uniform in
  // [-1/sqrt(fan_in), 1/sqrt(fan_in)], fan_in = C_in*K*K or IN. Deterministic for a seed.
  void initialize(uint64_t seed);
  // Every parameter (or its momentum buffer) as named tensors in state_dict order, and back.
  std::vector<NamedTensor> read(bool momentum) const;
  void write(const std::vector<NamedTensor> &tensors, bool momentum);

  // One SGD step of every part of every parameter (torch.optim.SGD semantics), each where the
  // part lives: a conv part's on its plan's workers, every other parameter's at home(). One task
  // for all the parts that share worker kinds (one to three tasks a step), except a large CPU
  // side's, which is one task per layer (kSplitUpdateFloats in parameter_set.cpp). With the
  // update folded (use_update_fold), the side's update is held for the next chain to run instead.
  void submit_update(const SgdParams &params);

  // Folding the update into the next step's chain: where one chain (LayerChain::fold_update) is
  // the only task that reads the parameters' values, the update of step t runs at the start of
  // that chain's task of step t + 1 instead of as a task of its own, which removes a task and two
  // hand-offs from every step's path. Under the H100's MPS cap the CUDA chain started 0.11-0.16
  // ms after the CUDA update's end, which itself started 0.11 ms after the CPU chains' last add
  // (perf/results/h100-2026-12-07-k, trace-s104x4). Only where every parameter is one part
  // updated on `side`'s kind of worker in one task, the mirror (if any) updated on both sides and
  // its gradients summed packed or added (not in slices). The host's gradient sum then alternates
  // between two vectors, so that a step's CPU adds do not wait for the chain that reads the last
  // step's, and so do the CUDA chain's packed gradients (chain_grads), so that the chain does not
  // wait for the host's update that reads the last step's. Returns whether it is on.
  bool use_update_fold(Where side);
  // Holds no update from now on (submitting the one held): a Trainer's networks decide anew.
  void stop_update_fold();
  // The held update, for the chain's task to run first (and no longer held), or nullopt.
  struct FoldedUpdate {
    SgdParams params;
    starpu_data_handle_t extra_grads;  // added to the gradients (the host's sum), or null
    // The last step's packed gradients that the update reads (the CUDA chain's), or null: the
    // gradient slots the chain writes.
    starpu_data_handle_t grads;
  };
  std::optional<FoldedUpdate> take_folded_update();
  // The packed gradients that the CUDA chain writes this step (chain_grads' vector, or the other
  // one of the pair where the fold alternates them); null where it writes none.
  starpu_data_handle_t device_grads_to_write() const;
  // Submits the held update as a task of its own, if there is one: before anything but the
  // folding chain reads the values (read, write and submit_pack_weights do it themselves).
  void submit_held_update() const;
  // For steps whose networks add their gradients together (micro-batches): every part gets at
  // least `slots` gradient slots (Parameter::grad), one for each network to overwrite, and
  // submit_sum_grads(slots) adds slots 1 .. slots-1 into slot 0, one task per part where the
  // part's update runs. Replaces STARPU_REDUX sums, whose tree of tasks over every worker's
  // private copy (each registered as a handle of its own) cost 1.3-2.6 ms of a step with 16 CPU
  // workers on the H200.
  // `cpu_slots` (two or more, not 0) are the slots of networks on the CPU workers: where a part's
  // update runs elsewhere, they are first summed on the CPU into the first of them, so that one
  // copy a part crosses the bus instead of one per CPU network. `cpu_slot_workers`, where given,
  // says where each of cpu_slots' networks ran (a pinned chain's worker): with the host mirror,
  // each slot's add into the packed sum runs there.
  void use_grad_slots(size_t slots);
  size_t grad_slots() const { return grad_slots_; }
  void submit_sum_grads(size_t slots, const std::vector<size_t> &cpu_slots = {},
                        const std::vector<Where> &cpu_slot_workers = {});

  // A sample split's exchange with its CPU networks, packed (codelets/sum_packed.h): the CPU
  // networks' gradient slots are summed on the CPU into one vector, which the update on the CUDA
  // side adds in as it updates; the CPU networks' chains read the weights from one packed host
  // vector (LayerChain). Two copies across the bus a step instead of two per parameter. Only
  // where every parameter is one part and all are updated on one side off the CPU workers (CUDA,
  // or any worker); returns whether it is on.
  // The host's weights are kept one of two ways: by default the update runs on
  // both sides, the CUDA side packing its own gradients for the CPU side, which applies the same
  // float operations to its packed weights and momentum (codelets/sgd.h): the CPU chains of the
  // next step wait for one copy, not for the GPU's update and a copy back. With
  // STARCNN_MIRROR_UPDATE=copy the CUDA update writes the new weights packed, which cross back.
  // The mirror is refreshed by submit_pack_weights (call it before the first step, and after
  // anything but the update wrote the weights or momenta).
  bool use_host_mirror();
  // The packed weights (parameters in order, each whole), or null when the mirror is off.
  const Tensor *host_weights() const { return host_weights_ ? &*host_weights_ : nullptr; }
  // Where `p`'s values start in host_weights() (and in chain_grads()).
  size_t host_offset(const Parameter &p) const;
  // With the mirror and the packed gradient sum (the default of STARCNN_CPU_GRAD_SUM): the packed
  // gradients (host_weights()' layout) that a chain writes, made on the chain's first call. For
  // the CPU chain of gradient slot `slot` (1 or more; throws past the slots) a vector of its own,
  // which submit_sum_grads adds into the host's sum instead of the slot's parameter gradients.
  // For the CUDA chain of slot 0, where both sides update and every convolution's weight starts
  // 16-byte aligned in the layout, the CUDA side's packed gradients, which both updates then read
  // (no packing task; STARCNN_CUDA_PACKED_GRADS=0 turns it off).
  // Null otherwise: the chain writes the parameters' slots.
  // One handle instead of two a layer: in H100 call f's trace (perf/results/h100-2026-12-06-f)
  // a task's wait after its last input grew with the handles it names across the step's task
  // kinds, and the chains the update readied started ~45 us apart; whether the handles or the
  // polling workers cost that is not yet measured (task_overhead's fan-out).
  const Tensor *chain_grads(size_t slot, bool cuda);
  void submit_pack_weights();

  // A CPU plan's micro-batches with STARCNN_CPU_ONLY_SUM=packed (default flat): the chains of
  // slots 1 and up write their gradients packed (chain_grads), each added into one packed sum as
  // it ends, which the update adds in, so that a step's barrier is the last chain's add and one
  // update instead of one sum task per parameter after every chain (the development VM's trace,
  // perf/results/devvm-2026-12-07-cpu-gaps). Only where every parameter is one part updated on the
  // CPU workers and the set is small enough for one update task (lenet, not wide); off until it
  // is measured on a 16-core host. Returns whether it is on.
  bool use_cpu_packed_sum();

 private:
  // Where a part of `p` is updated: its conv plan part's workers, else home().
  Where part_where(const Parameter &p, size_t part) const;
  // Whether the update of `floats` floats on `where` is one task per layer (a large CPU side's,
  // kSplitUpdateFloats in parameter_set.cpp), not one task.
  bool updates_per_layer(Where where, size_t floats) const;
  // Every parameter's floats where each is one part updated where the first is (one SGD task's
  // vectors, packable in params_ order), else 0.
  size_t one_side_floats() const;
  // The CPU chains' gradients (one group of slots a parameter) summed into the packed host
  // gradients, one task a slice (host_grad_slices_).
  void submit_sliced_sum(const std::vector<std::vector<starpu_data_handle_t>> &groups);
  // The same sum as one add per CPU slot, each as soon as its chain ends (grad_sum_ add or
  // packed).
  void submit_added_sum(const std::vector<size_t> &cpu_slots,
                        const std::vector<Where> &cpu_slot_workers);

  std::vector<std::unique_ptr<Parameter>> params_;
  std::map<std::string, SplitPlan> conv_plans_;
  Where home_ = Where::any;
  int cpu_workers_ = 1;
  size_t grad_slots_ = 1;
  std::optional<Tensor> host_weights_, host_grads_;  // the mirror (use_host_mirror)
  // With both sides updating (null when the weights come back): the host's momentum, and the
  // CUDA side's own gradients packed.
  std::optional<Tensor> host_momenta_, device_grads_;
  // host_grads_ cut for summing side by side (null: one task); cleaned before host_grads_ goes.
  std::unique_ptr<PackedSlices> host_grad_slices_;
  bool pin_sum_slices_ = true;  // each slice's task on a CPU worker of its own (submit_sliced_sum)
  // How the CPU chains' gradients reach host_grads_ (STARCNN_CPU_GRAD_SUM): each chain's packed
  // vector added as it ends, its per-parameter slots added as it ends, or slices after the last.
  enum class GradSum { packed, add, slices } grad_sum_ = GradSum::packed;
  std::map<size_t, Tensor> chain_grads_;  // grad_sum_ packed: per CPU slot (chain_grads)
  bool device_grads_from_chain_ = false;  // the CUDA chain writes device_grads_ (chain_grads)
  bool cuda_packed_grads_ = false;        // STARCNN_CUDA_PACKED_GRADS=1
  bool host_grads_pending_ = false;       // summed by submit_sum_grads, for the next update to add
  // use_update_fold: the side whose update is held, and the held update (submitted by
  // submit_held_update, itself const: the values read after it are the same either way).
  std::optional<Where> fold_side_;
  struct HeldUpdate {
    std::vector<SgdHandles> vectors;
    SgdParams params;
    Where where;
    SgdPacked packed;
  };
  mutable std::optional<HeldUpdate> held_;
  // With the fold and the mirror: the next step's sum, and the CUDA chain's next gradients.
  std::optional<Tensor> other_host_grads_, other_device_grads_;
};

}  // namespace starcnn
