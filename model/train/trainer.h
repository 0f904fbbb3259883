// The training loop as a task flow: every step (load the batch, forward, loss, backward, SGD) is
// submitted without waiting; the host waits only to read the loss every `log_every` steps and at
// the end of an epoch, and stops at TrainConfig::max_steps if set. At most `steps_in_flight` steps
// are submitted ahead of the workers.
#pragma once

#include "model/data/batcher.h"
#include "model/dist/batch_shards.h"
#include "model/dist/rank_sum.h"
#include "model/nn/network.h"
#include "model/nn/parameter_set.h"
#include "model/train/evaluator.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace starcnn {

// Whether the CPU micro-batches of a step (TrainConfig::pin_cpu_chains) each run on a CPU worker
// of their own, each as one task (LayerChain): automatic pins a sample split's chains, and a
// whole-CPU plan's when the network's samples are small (min_samples_per_cpu_chain above 1:
// lenet, not wide), leaving the others to the scheduler.
enum class CpuChains { automatic, pinned, scheduled };

struct TrainConfig {
  size_t batch = 64;
  float lr = 0.02f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  uint64_t seed = 1;
  size_t log_every = 100;  // steps between loss readings
  size_t eval_batch = 1000;
  size_t eval_slots = 0;  // networks evaluating batches at once (0: see default_evaluator_slots)
  // Steps submitted ahead of the workers, counted in the first step's tasks: StarPU's own
  // (dependency sync tasks, reductions) count too, so the window holds a little less. With 2,
  // a sample split of 15 CPU chains (243 tasks, plus 90 of StarPU's) ran with its next step
  // submitted only after its update, leaving the GPU idle ~2.5 ms a step under the MPS cap
  // (perf/results/h200-2026-12-03-w).
  int steps_in_flight = 3;
  // Each step's batch is cut into this many micro-batches, each through its own copy of the
  // network's activations, with the parameter gradients summed (STARPU_REDUX): the same step,
  // as parallel task chains for the workers to share.
  int micro_batches = 1;
  // The sample split (partition/split_plan.h): cpu_samples > 0 replaces micro_batches by one
  // micro-batch of the other samples on the CUDA workers and cpu_micro_batches (0: one per CPU
  // worker but the first, of cpu_chain_samples or more) on the CPU workers, every op of each on
  // its side.
  SampleSplit samples;
  // The fewest samples of a CPU chain where the chain count is chosen (micro_batches 0, a sample
  // split's cpu_micro_batches 0): min_samples_per_cpu_chain() of the network.
  size_t cpu_chain_samples = 16;
  // Each micro-batch whose every op runs on the CPU workers (a sample split's CPU chains, or the
  // micro-batches of a whole-CPU plan) pinned to a CPU worker of its own when there are enough,
  // and run there as one task (LayerChain): no scheduler choice and no hand-off between its layers,
  // but a chain's independent work (a layer's backward filter and data) no longer runs side by
  // side. On the H200 (call z): lenet's CPU step 0.59x / 0.76x as long pinned, wide's 1.15x /
  // 1.16x; lenet b256's sample splits under the MPS cap 3.60-4.18 ms pinned against 3.84-4.85
  // scheduled: hence automatic (CpuChains).
  CpuChains pin_cpu_chains = CpuChains::automatic;
  // Whole convolutions run the ReLU and maxpool after them in their own tasks (Network's fuse).
  bool fuse_layers = true;
  // A fusing micro-batch whose every layer is whole on CUDA trains as one task (LayerChain),
  // its kernels replayed as a CUDA graph, or launched one by one, or layer by layer (off).
  CudaChain cuda_chain = CudaChain::graph;
  // Learning rate over the run: `lr` throughout, or cosine annealing from `lr` at step 0 to zero
  // at step `schedule_steps` (step counts from the first run, so a resumed run continues it).
  bool cosine_lr = false;
  int64_t schedule_steps = 0;
  int64_t max_steps = 0;  // steps this Trainer runs at most, over all epochs (0: no limit)
  // Data-parallel training (model/dist/): this rank runs samples [shard.first, shard.first +
  // shard.size) of each step's `batch` (size 0: all of them), the loss staying averaged over the
  // whole `batch`, and `rank_sum` sums the gradients and loss statistics across ranks.
  BatchShard shard;
  // The samples of each step this process runs: its shard, or the whole batch.
  size_t local_batch() const { return shard.size > 0 ? shard.size : batch; }
  RankSum *rank_sum = nullptr;
};

// Micro-batches for a step of `batch` samples on these workers, its ops placed at `home`:
// `requested` if positive, else the default: on the CPU workers (no CUDA worker, or a plan that
// keeps the network on the CPU), a step of one task per op keeps one core busy at a time, so each
// CPU worker gets a micro-batch (of `min_samples` or more, so that tasks stay worth their
// overhead); a GPU runs a whole batch best.
int choose_micro_batches(long requested, const MachineWorkers &workers, size_t batch,
                         Where home = Where::any, size_t min_samples = 16);

// The chains a sample split cuts its `on_cpu` samples into on `cpu_workers` CPU workers: one
// per worker but the one loading batches, each of `min_samples` or more (one however few).
size_t cpu_chain_count(size_t on_cpu, int cpu_workers, size_t min_samples);
// The CPU share nearest `k` (in 1 .. batch - 1) that cuts into chains of equal length: the step
// waits for the longest chain: samples:108 on 13 chains (4 of 9, 9 of 8) takes as long on the CPU
// as 13 chains of 9, while 104 (13 of 8) is a sample per chain shorter for 4 more samples on the
// GPU. Ties go to the smaller share.
size_t even_chain_share(size_t k, size_t batch, int cpu_workers, size_t min_samples);

// The micro-batches of a step: where each starts in the batch, its size, and where it runs
// (nullopt: as the parameter set's plan says).
struct MicroBatch {
  size_t first = 0, size = 0;
  std::optional<NetworkPlacement> placement;
};
// The step's batch cut as `config` says (micro_batches even parts, or the sample split) for a
// machine with `cpu_workers` CPU workers. Throws std::invalid_argument when the cut does not fit
// the batch.
std::vector<MicroBatch> cut_batch(const TrainConfig &config, int cpu_workers);

// With 2 .. cpu_workers micro-batches that run on the CPU alone (placed there with every op, or
// following a plan whose home is the CPU and whose convolutions are whole CPU layers), gives the
// k-th of them CPU worker k (cpu_worker()), or k + 1 beside a micro-batch of the GPU's (worker 0
// loads the batches), as `mode` says (automatic: the placed ones, a sample split's, and a
// whole-CPU plan's of a small network, see CpuChains); leaves the cut as it is otherwise.
void pin_cpu_chains(std::vector<MicroBatch> &cut, const ParameterSet &params,
                    const NetworkSpec &spec, int cpu_workers, CpuChains mode = CpuChains::pinned);

// With a sample split's xB (`split.cpu_block`), lets the chains pinned to CPU workers claim blocks
// of B samples from each other (model/nn/chain_claims.h). Throws std::invalid_argument where no
// chain is pinned (more chains than CPU workers).
void claim_cpu_chains(std::vector<MicroBatch> &cut, const SampleSplit &split);

// What split plans are made for when a step runs as `micro_batches` micro-batches: the largest
// micro-batch, and the CPU workers the other micro-batches' chains leave it (cutting a CPU part
// that every worker already has a chain for only adds tasks).
struct MicroBatchShare {
  size_t batch = 0;
  MachineWorkers workers;
};
MicroBatchShare micro_batch_share(const MachineWorkers &workers, size_t batch, int micro_batches);

struct Progress {
  size_t epoch = 0, batch = 0, batches = 0;  // batch: steps done in this epoch
  int64_t step = 0;                          // steps done since the first run
  double loss = 0, accuracy = 0;             // over the steps since the last report
  double images_per_s = 0, seconds = 0;      // since the epoch started
};

struct EpochSummary {
  size_t epoch = 0, steps = 0, batches = 0;  // batches: steps of a whole epoch
  double train_loss = 0, train_accuracy = 0, images_per_s = 0, seconds = 0;
  bool complete = false;           // every batch of the epoch ran
  bool reached_max_steps = false;  // config.max_steps steps have run
  bool interrupted = false;        // stopped by `stop`
};

class Trainer {
 public:
  Trainer(const NetworkSpec &spec, ParameterSet &params, const Dataset &train,
          const TrainConfig &config);

  // Trains one epoch, or less once config.max_steps steps have run (not marked interrupted).
  // Calls on_progress after each loss reading; when `stop` turns true, submits no further step,
  // waits for those submitted and returns with interrupted set. Throws
  // std::runtime_error when the loss becomes NaN or infinite.
  EpochSummary train_epoch(size_t epoch, const std::function<void(const Progress &)> &on_progress,
                           const std::atomic<bool> &stop);
  // Loss and accuracy over a whole data set, forward only, by an Evaluator made on first use:
  // batches are independent and run on whichever workers are free.
  Evaluation evaluate(const Dataset &data);

  int64_t step() const { return step_; }
  // True once config.max_steps steps have run: train_epoch then runs no further step.
  bool reached_max_steps() const {
    return config_.max_steps > 0 && steps_run_ >= config_.max_steps;
  }
  // For a resumed run: the step count, and whether momentum buffers were loaded (else the first
  // step starts them, as PyTorch does).
  void resume(int64_t step, bool momentum_loaded);
  // StarPU tasks submitted by one training step (measured on the first step).
  uint64_t tasks_per_step() const { return tasks_per_step_; }
  const Network &network() const { return *networks_.front(); }
  size_t micro_batches() const { return networks_.size(); }
  // The CPU chains that claim blocks of each other's samples (samples:K/MxB), 0 without.
  size_t claiming_chains() const { return claiming_.size(); }
  // Whether the first network's chain runs each step's update at the start of the next step
  // (update_fold_asked(), ParameterSet::use_update_fold).
  bool folds_update() const { return folds_update_; }
  size_t batches_per_epoch() const { return batcher_.batch_count(); }
  // The learning rate of training step `step` (see TrainConfig::cosine_lr).
  float lr_at(int64_t step) const;
  // Cosine annealing to zero at step `total_steps` (known once a resumed run knows its epoch).
  void anneal_lr_until(int64_t total_steps) {
    config_.cosine_lr = true;
    config_.schedule_steps = total_steps;
  }

 private:
  // A claiming network's peers in the step that loads batch slot `slot` (0 or 1), the step's
  // number `step`: the other claiming chains' images and labels.
  LayerChain::Peers claim_peers(size_t network, size_t slot, uint64_t step) const;

  const NetworkSpec &spec_;
  ParameterSet &params_;
  TrainConfig config_;
  Batcher batcher_;
  std::vector<std::unique_ptr<Network>> networks_;  // one per micro-batch
  std::vector<MicroBatch> micro_;                   // where each network's samples are
  std::vector<size_t> cpu_slots_;        // gradient slots (> 0) of the networks on the CPU workers
  std::vector<Where> cpu_slot_workers_;  // and where each of them runs (its chain's worker)
  std::vector<size_t> claiming_;         // the networks whose chains claim blocks of each other's
  std::unique_ptr<ChainClaims> claims_;  // their counter
  uint64_t claim_step_ = 0;              // their last step's number
  std::unique_ptr<Evaluator> evaluator_;
  std::vector<Tensor> images_, labels_;  // [slot * micro-batches + micro-batch]
  Tensor stats_;
  Where stats_where_ = Where::any;  // where the loss statistics are summed and cleared
  int64_t step_ = 0;
  int64_t steps_run_ = 0;  // by this Trainer, unlike step_ which counts from a resumed step
  bool momentum_started_ = false;
  bool folds_update_ = false;
  uint64_t tasks_per_step_ = 0;
};

// STARCNN_FOLD_UPDATE=1 asks the Trainer to fold each step's update into the next step's chain
// where it can (a network wholly on CUDA, alone or beside a sample split's CPU chains on the host
// mirror); 0 or unset: an update task of its own (the default until measured on the H200). Throws
// std::invalid_argument for another value.
bool update_fold_asked();

}  // namespace starcnn
