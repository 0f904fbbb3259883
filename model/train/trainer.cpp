#include "model/train/trainer.h"

#include "codelets/accumulate.h"
#include "model/data/batch_loader.h"
#include "model/train/chain_samples.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace starcnn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<int> image_shape(size_t batch, const Dataset &data) {
  return {int(batch), int(data.channels), int(data.height), int(data.width)};
}

// Reads and clears the {loss sum, correct count} accumulator (waits for the tasks adding to it),
// on the workers of `where`.
std::pair<double, double> take_stats(Tensor &stats, Where where) {
  const std::vector<float> values = stats.read();
  submit_zero_fill(stats.handle(), where);
  return {values[0], values[1]};
}

}  // namespace

int choose_micro_batches(long requested, const MachineWorkers &workers, size_t batch, Where home,
                         size_t min_samples) {
  if (requested > 0) return int(requested);
  if (workers.cuda > 0 && home != Where::cpu) return 1;
  // One chain per CPU worker, each of min_samples or more (model/train/chain_samples.h).
  return int(std::max<size_t>(1, std::min<size_t>(size_t(std::max(1, workers.cpu)),
                                                  batch / std::max<size_t>(1, min_samples))));
}

size_t cpu_chain_count(size_t on_cpu, int cpu_workers, size_t min_samples) {
  return size_t(
      choose_micro_batches(0, {std::max(1, cpu_workers - 1), 0}, on_cpu, Where::cpu, min_samples));
}

size_t even_chain_share(size_t k, size_t batch, int cpu_workers, size_t min_samples) {
  if (batch < 2) return k;
  k = std::clamp<size_t>(k, 1, batch - 1);
  const auto even = [&](size_t share) {
    return share % cpu_chain_count(share, cpu_workers, min_samples) == 0;
  };
  // Outwards from k, the smaller side first; a share of 1 is one chain, so the walk ends.
  for (size_t d = 0;; ++d) {
    if (d < k && even(k - d)) return k - d;
    if (k + d <= batch - 1 && even(k + d)) return k + d;
  }
}

MicroBatchShare micro_batch_share(const MachineWorkers &workers, size_t batch, int micro_batches) {
  const size_t micro = size_t(std::max(1, micro_batches));
  MicroBatchShare share;
  share.batch = (batch + micro - 1) / micro;
  share.workers = workers;
  share.workers.cpu = std::max(1, workers.cpu / int(micro));
  return share;
}

std::vector<MicroBatch> cut_batch(const TrainConfig &config, int cpu_workers) {
  std::vector<MicroBatch> cut;
  const auto add_even = [&](size_t first, size_t samples, size_t parts,
                            std::optional<NetworkPlacement> placement) {
    for (size_t m = 0; m < parts; ++m) {
      const size_t size = samples / parts + (m < samples % parts ? 1 : 0);
      cut.push_back({first, size, placement});
      first += size;
    }
  };
  // This rank's shard of the step (all of it in a single process).
  const size_t batch = config.local_batch();
  const size_t start = config.shard.first;
  const SampleSplit &split = config.samples;
  if (split.cpu_samples <= 0) {
    if (config.micro_batches < 1 || size_t(config.micro_batches) > batch)
      throw std::invalid_argument("micro-batches must be between 1 and the batch size (" +
                                  std::to_string(batch) + "), got " +
                                  std::to_string(config.micro_batches));
    add_even(start, batch, size_t(config.micro_batches), std::nullopt);
    return cut;
  }
  const size_t on_cpu = size_t(split.cpu_samples);
  if (on_cpu >= batch)
    throw std::invalid_argument(split.describe() + " leaves no sample of the batch (" +
                                std::to_string(batch) + ") to the CUDA workers");
  // Chains of cpu_chain_samples or more, on every CPU worker but the one loading batches
  // (pin_cpu_chains). Shorter chains on more workers lost: under the H200's MPS cap lenet b256's
  // samples:96 took 3.47 ms as 12 chains of 8 (call u), 3.99-4.80 as 14-15 chains of 6-7 (calls
  // v, x): each of a chain's ~14 tasks waits 0.1-0.2 ms for the previous one on its worker, and
  // more busy workers leave fewer cores to the submitting thread (perf/results/h200-2026-12-03-x).
  size_t cpu_parts = size_t(split.cpu_micro_batches);
  if (cpu_parts == 0) cpu_parts = cpu_chain_count(on_cpu, cpu_workers, config.cpu_chain_samples);
  if (cpu_parts > on_cpu)
    throw std::invalid_argument(split.describe() + ": more CPU micro-batches than samples");
  cut.push_back({start, batch - on_cpu, std::nullopt});
  add_even(start + batch - on_cpu, on_cpu, cpu_parts, NetworkPlacement{Where::cpu, true});
  return cut;
}

namespace {

// Whether every convolution of `spec` is one whole task on the CPU under `params`' plans.
bool convs_whole_on_cpu(const ParameterSet &params, const NetworkSpec &spec) {
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind != LayerKind::conv) continue;
    const SplitPlan &plan = params.conv_plan(layer.name);
    if (plan.parts.size() != 1 || plan.parts[0].tasks != 1 || plan.parts[0].where != Where::cpu)
      return false;
  }
  return true;
}

}  // namespace

void pin_cpu_chains(std::vector<MicroBatch> &cut, const ParameterSet &params,
                    const NetworkSpec &spec, int cpu_workers, CpuChains mode) {
  if (mode == CpuChains::scheduled) return;
  // A pinned chain runs as one task (LayerChain), which pays where tasks are small: lenet's CPU
  // step under lws took 1.59 / 3.09 ms pinned against 2.68 / 4.08 scheduled (b64 / b256),
  // wide's 81.1 / 381.4 against 70.5 / 327.5, its chains' backward filter and data no longer side
  // by side (perf/results/h200-2026-12-03-z); beside a CUDA worker, under dmda, lenet's scheduled
  // `cpu` candidate took 17.4 ms (call u).
  const bool pin_plan = mode == CpuChains::pinned || min_samples_per_cpu_chain(spec) > 1;
  const bool plan_on_cpu =
      pin_plan && params.home() == Where::cpu && convs_whole_on_cpu(params, spec);
  std::vector<MicroBatch *> chains;
  bool beside_gpu_part = false;
  for (MicroBatch &m : cut) {
    const bool placed_on_cpu =
        m.placement && m.placement->home == Where::cpu && m.placement->convs_at_home;
    if (placed_on_cpu || (!m.placement && plan_on_cpu))
      chains.push_back(&m);
    else
      beside_gpu_part = true;
  }
  // Beside a GPU part the chains leave CPU worker 0 free for the batches' loading tasks, which
  // the GPU waits for: with a chain on every CPU worker, MNIST lenet b256's samples:128 under the
  // MPS cap began its GPU tasks 2.4 ms (median) after the previous update, against 0.13 ms with
  // 8 of 15 workers free (perf/results/h200-2026-12-03-u, -v).
  const int first = beside_gpu_part ? 1 : 0;
  // A CPU plan's single micro-batch gains nothing pinned; a split's single chain runs as one task.
  const size_t fewest = beside_gpu_part ? 1 : 2;
  if (chains.size() < fewest || chains.size() > size_t(std::max(0, cpu_workers - first))) return;
  for (size_t k = 0; k < chains.size(); ++k)
    chains[k]->placement = NetworkPlacement{cpu_worker(first + int(k)), true};
}

void claim_cpu_chains(std::vector<MicroBatch> &cut, const SampleSplit &split) {
  if (split.cpu_block <= 0) return;
  std::vector<MicroBatch *> pinned;
  size_t largest = 0;
  for (MicroBatch &m : cut)
    if (m.placement && m.placement->pinned_to_cpu_worker()) {
      pinned.push_back(&m);
      largest = std::max(largest, m.size);
    }
  // Every chain's program runs blocks of one size (the activations sized for it), no larger than
  // the largest chain.
  for (MicroBatch *m : pinned)
    m->placement->claim_block = int(std::min(size_t(split.cpu_block), largest));
  if (pinned.empty())
    throw std::invalid_argument(split.describe() +
                                ": its CPU chains claim blocks only when each is pinned to a CPU "
                                "worker (not with chains left to the scheduler, nor with more "
                                "chains than CPU workers but the first)");
}

Trainer::Trainer(const NetworkSpec &spec, ParameterSet &params, const Dataset &train,
                 const TrainConfig &config)
    : spec_(spec),
      params_(params),
      config_(config),
      batcher_(train, {config.batch, true, config.seed, true}) {
  if (batcher_.batch_count() == 0)
    throw std::invalid_argument("the training set has fewer samples (" +
                                std::to_string(train.count) + ") than one batch (" +
                                std::to_string(config.batch) + ")");
  const int cpu_workers = int(starpu_cpu_worker_get_count());
  micro_ = cut_batch(config, cpu_workers);
  pin_cpu_chains(micro_, params, spec, cpu_workers, config.pin_cpu_chains);
  claim_cpu_chains(micro_, config.samples);
  const size_t micro = micro_.size();
  const bool both_kinds = config.samples.cpu_samples > 0;
  params.use_grad_slots(micro);
  for (size_t m = 1; m < micro; ++m) {  // the networks' homes (Network's constructor)
    const Where home = micro_[m].placement ? micro_[m].placement->home : params.home();
    if (kind_of(home) != Where::cpu) continue;
    cpu_slots_.push_back(m);
    cpu_slot_workers_.push_back(home);
  }
  // A sample split's CPU networks exchange weights and gradients with the GPU packed, and a CPU
  // plan's may sum their gradients packed (before the networks are built: their chains read the
  // packed weights and write the packed gradients). Not across ranks: the rank sum adds the
  // parameters' gradient slots, which the packed CPU gradients bypass.
  if (!cpu_slots_.empty() && !config.rank_sum) {
    if (both_kinds)
      params.use_host_mirror();
    else
      params.use_cpu_packed_sum();
  }
  for (size_t m = 0; m < micro; ++m)
    networks_.push_back(std::make_unique<Network>(spec, params, int(micro_[m].size),
                                                  int(config.batch), m, micro_[m].placement,
                                                  config.fuse_layers, config.cuda_chain));
  for (size_t m = 0; m < micro; ++m)
    if (networks_[m]->claims()) claiming_.push_back(m);
  // The fold needs the first network's chain to be the only reader of the parameters' values:
  // the others, if any, read the host mirror. Not across ranks (not tried there).
  params.stop_update_fold();
  bool others_read_mirror = true;
  for (size_t m = 1; m < micro; ++m)
    others_read_mirror = others_read_mirror && networks_[m]->reads_packed_weights();
  folds_update_ = update_fold_asked() && !config.rank_sum && others_read_mirror &&
                  networks_[0]->fold_update(params);
  if (config.samples.cpu_block > 0) {
    if (claiming_.empty())
      throw std::invalid_argument(config.samples.describe() +
                                  ": its CPU chains cannot claim blocks here (they add their "
                                  "gradients packed: not with STARCNN_CPU_GRAD_SUM other than "
                                  "packed, nor across ranks)");
    claims_ = std::make_unique<ChainClaims>();
  }
  for (int slot = 0; slot < 2; ++slot)
    for (size_t m = 0; m < micro; ++m) {
      const int size = networks_[m]->batch();
      const std::string name = std::to_string(slot) + (micro > 1 ? "." + std::to_string(m) : "");
      images_.emplace_back(image_shape(size_t(size), train), "images" + name);
      labels_.emplace_back(std::vector<int>{size}, "labels" + name, ElementType::i32);
    }
  stats_ = Tensor({int(kXentStatsSize)}, "loss_stats");
  stats_where_ = both_kinds ? Where::any : params_.home();  // where the loss tasks run
  set_sum_reduction(stats_.handle(), stats_where_);
}

LayerChain::Peers Trainer::claim_peers(size_t network, size_t slot, uint64_t step) const {
  LayerChain::Peers peers;
  peers.ticket = {claims_.get(), step, 0, uint32_t(claiming_.size())};
  for (size_t c = 0; c < claiming_.size(); ++c) {
    if (claiming_[c] == network) {
      peers.ticket.own = uint32_t(c);
      continue;
    }
    peers.images.push_back(&images_[slot * networks_.size() + claiming_[c]]);
    peers.labels.push_back(&labels_[slot * networks_.size() + claiming_[c]]);
  }
  return peers;
}

float Trainer::lr_at(int64_t step) const {
  if (!config_.cosine_lr || config_.schedule_steps <= 0) return config_.lr;
  const double done = std::min(1.0, double(step) / double(config_.schedule_steps));
  return float(0.5 * double(config_.lr) * (1.0 + std::cos(3.14159265358979323846 * done)));
}

void Trainer::resume(int64_t step, bool momentum_loaded) {
  step_ = step;
  momentum_started_ = momentum_loaded;
}

EpochSummary Trainer::train_epoch(size_t epoch,
                                  const std::function<void(const Progress &)> &on_progress,
                                  const std::atomic<bool> &stop) {
  starpu_task_wait_for_all();  // no load task of the previous epoch may still read the order
  batcher_.start_epoch(epoch);
  params_.submit_pack_weights();  // the host mirror, where there is one, from the weights now
  const size_t batches = batcher_.batch_count();
  const Clock::time_point start = Clock::now();
  EpochSummary summary;
  summary.epoch = epoch;
  summary.batches = batches;
  double epoch_loss = 0, epoch_correct = 0;
  size_t window_steps = 0;
  for (size_t b = 0; b < batches && !stop.load() && !reached_max_steps(); ++b) {
    const uint64_t submitted = submitted_task_count();
    const size_t slot = b % 2, first = slot * networks_.size();
    // Claiming chains read each other's samples: every load is submitted before them.
    const bool claiming = !claiming_.empty();
    if (claiming) {
      ++claim_step_;
      for (size_t m = 0; m < networks_.size(); ++m)
        submit_load_batch(batcher_, b, images_[first + m], labels_[first + m], micro_[m].first);
    }
    for (size_t m = 0; m < networks_.size(); ++m) {
      const Tensor &images = images_[first + m], &labels = labels_[first + m];
      if (!claiming) submit_load_batch(batcher_, b, images, labels, micro_[m].first);
      if (networks_[m]->claims()) {
        const LayerChain::Peers peers = claim_peers(m, slot, claim_step_);
        networks_[m]->forward_backward(images, labels, stats_, &peers);
      } else {
        networks_[m]->forward_backward(images, labels, stats_);
      }
    }
    params_.submit_sum_grads(networks_.size(), cpu_slots_, cpu_slot_workers_);
    // Data-parallel: the update below applies the gradients of the whole batch, every rank's.
    if (config_.rank_sum) config_.rank_sum->sum_gradients(params_);
    const bool first_step = !momentum_started_;
    params_.submit_update({lr_at(step_), config_.momentum, config_.weight_decay, first_step});
    momentum_started_ = true;
    if (tasks_per_step_ == 0) tasks_per_step_ = submitted_task_count() - submitted;
    ++step_;
    ++steps_run_;
    ++window_steps;
    ++summary.steps;
    starpu_task_wait_for_n_submitted(unsigned(tasks_per_step_) * unsigned(config_.steps_in_flight));

    if ((b + 1) % config_.log_every == 0 || b + 1 == batches || stop.load() ||
        reached_max_steps()) {
      if (config_.rank_sum) config_.rank_sum->sum(stats_);
      const auto [loss, correct] = take_stats(stats_, stats_where_);
      const double samples = double(window_steps * config_.batch);
      if (!std::isfinite(loss))
        throw std::runtime_error("the training loss is " + std::to_string(loss) + " at step " +
                                 std::to_string(step_) +
                                 ": lower the learning rate or check the data");
      epoch_loss += loss;
      epoch_correct += correct;
      Progress progress;
      progress.epoch = epoch;
      progress.batch = b + 1;
      progress.batches = batches;
      progress.step = step_;
      progress.loss = loss / samples;
      progress.accuracy = correct / samples;
      progress.seconds = seconds_since(start);
      progress.images_per_s = double((b + 1) * config_.batch) / progress.seconds;
      window_steps = 0;
      if (on_progress) on_progress(progress);
    }
  }
  params_.submit_held_update();  // the last step's, where the fold holds it
  starpu_task_wait_for_all();
  summary.complete = summary.steps == batches;
  summary.reached_max_steps = reached_max_steps();
  summary.interrupted = !summary.complete && !summary.reached_max_steps;
  summary.seconds = seconds_since(start);
  const double samples = double(summary.steps * config_.batch);
  if (summary.steps > 0) {
    summary.train_loss = epoch_loss / samples;
    summary.train_accuracy = epoch_correct / samples;
    summary.images_per_s = samples / summary.seconds;
  }
  return summary;
}

Evaluation Trainer::evaluate(const Dataset &data) {
  params_.submit_held_update();
  if (!evaluator_)
    evaluator_ =
        std::make_unique<Evaluator>(spec_, params_, config_.eval_batch, config_.eval_slots);
  return evaluator_->evaluate(data);
}

bool update_fold_asked() {
  const char *value = std::getenv("STARCNN_FOLD_UPDATE");
  if (value == nullptr || std::string(value) == "0") return false;
  if (std::string(value) == "1") return true;
  throw std::invalid_argument(std::string("STARCNN_FOLD_UPDATE must be 0 or 1, got '") + value +
                              "'");
}

}  // namespace starcnn
