// Trainer with micro-batches: a step cut into micro-batches (each through its own copy of the
// activations and its own gradient slot, the slots summed, the loss averaged over the whole batch)
// is the same step as the whole batch's, with the CPU chains pinned to workers or not. Trained side
// by side from the same weights on the same data, with unequal micro-batches and split
// convolutions, both end with the same weights, momentum buffers and losses to float32 rounding.
#include "codelets/accumulate.h"
#include "codelets/sum_packed.h"
#include "model/data/dataset.h"
#include "model/dist/rank_sum.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/train/trainer.h"
#include "tests/support/comparisons.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/scoped_env.h"
#include "tests/support/small_dataset.h"
#include "tests/support/small_training.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace starcnn {
namespace {

class TrainerMicroBatchesTest : public testing::CpuSchedulerTest {};

Dataset random_dataset(size_t count) {
  return testing::small_dataset(count, 1, 12, 12, 5, 7);
}

struct TrainedRun : testing::TrainedWeights {
  size_t micro_batches = 0;
  size_t claiming_chains = 0;
  bool packed_exchange = false;   // the CPU networks' weights and gradients packed (host mirror)
  size_t mirror_differences = 0;  // host mirror elements whose bits differ from the weights'
  bool folds_update = false;      // Trainer::folds_update
};

TrainedRun train(const NetworkSpec &spec, const Dataset &data, const std::string &plan, int micro,
                 SampleSplit samples = SampleSplit(), bool pin = true, bool fuse = true,
                 RankSum *rank_sum = nullptr) {
  const CpuChains chains = pin ? CpuChains::pinned : CpuChains::scheduled;
  ParameterSet params(spec, parse_network_plan(plan), {int(starpu_cpu_worker_get_count()), 0});
  params.initialize(5);
  TrainConfig config = testing::small_training_config();
  config.micro_batches = micro;
  config.samples = samples;
  config.pin_cpu_chains = chains;
  config.fuse_layers = fuse;
  config.rank_sum = rank_sum;
  Trainer trainer(spec, params, data, config);
  TrainedRun run;
  run.micro_batches = trainer.micro_batches();
  run.claiming_chains = trainer.claiming_chains();
  run.packed_exchange = params.host_weights() != nullptr;
  run.folds_update = trainer.folds_update();
  static_cast<testing::TrainedWeights &>(run) = testing::train_two_epochs(trainer, params);
  if (const Tensor *mirror = params.host_weights()) {
    const std::vector<float> host = mirror->read();
    for (const auto &p : params.all()) {
      const std::vector<float> w = p->read();
      run.mirror_differences +=
          testing::count_bit_differences(w.data(), host.data() + params.host_offset(*p), w.size());
    }
  }
  return run;
}

double max_abs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

// Both runs' losses step by step, and their weights and momenta at the end, agree to float32
// rounding of the sums' order; the weights moved.
void expect_same_training(const NetworkSpec &spec, const TrainedRun &whole, const TrainedRun &cut) {
  ASSERT_EQ(cut.losses.size(), whole.losses.size());
  ASSERT_EQ(whole.losses.size(), 10u);
  for (size_t s = 0; s < whole.losses.size(); ++s)
    EXPECT_NEAR(cut.losses[s], whole.losses[s], 1e-5 * std::fabs(whole.losses[s])) << "step " << s;

  ParameterSet start(spec, parse_network_plan("none"), {1, 0});
  start.initialize(5);
  const std::vector<NamedTensor> initial = start.read(false);
  for (size_t t = 0; t < whole.weights.size(); ++t) {
    SCOPED_TRACE(whole.weights[t].name);
    const std::vector<float> &w = whole.weights[t].values, &m = cut.weights[t].values;
    ASSERT_EQ(m.size(), w.size());
    std::vector<float> change(w.size());
    for (size_t j = 0; j < w.size(); ++j) change[j] = w[j] - initial[t].values[j];
    const double moved = max_abs(change);
    ASSERT_GT(moved, 0.0) << "training moved no weight";
    const double tolerance = 1e-4 * moved + 4 * 1.2e-7 * max_abs(w);
    for (size_t j = 0; j < w.size(); ++j) ASSERT_NEAR(m[j], w[j], tolerance) << "element " << j;
    const std::vector<float> &wm = whole.momenta[t].values, &mm = cut.momenta[t].values;
    const double momentum_tolerance = 1e-4 * max_abs(wm) + 1e-7;
    for (size_t j = 0; j < wm.size(); ++j)
      ASSERT_NEAR(mm[j], wm[j], momentum_tolerance) << "momentum element " << j;
  }
}

const char *const kNet =
    "input 1 12 12\nconv 4 3\nrelu\nmaxpool 2\nconv 6 3 pad=1\nrelu\nflatten\nlinear 5\n";

TEST_P(TrainerMicroBatchesTest, MicroBatchesTrainLikeTheWholeBatch) {
  const NetworkSpec spec = parse_network(kNet, "micro.net");
  const Dataset data = random_dataset(40);  // 5 steps of 8 per epoch
  const TrainedRun whole = train(spec, data, "none", 1);
  const TrainedRun micro =
      train(spec, data, "none;conv2=2@cpu,4@any", 3);  // micro-batches of 3, 3, 2
  ASSERT_EQ(whole.micro_batches, 1u);
  ASSERT_EQ(micro.micro_batches, 3u);
  expect_same_training(spec, whole, micro);
}

// The sample split: 5 samples of each step of 8 through the whole network on the CPU workers in
// two micro-batches (every op of theirs masked to the CPU), the other 3 as the plan places them.
TEST_P(TrainerMicroBatchesTest, SampleSplitTrainsLikeTheWholeBatch) {
  const NetworkSpec spec = parse_network(kNet, "samples.net");
  const Dataset data = random_dataset(40);
  const TrainedRun whole = train(spec, data, "none", 1);
  SampleSplit samples;
  samples.cpu_samples = 5;
  samples.cpu_micro_batches = 2;
  const TrainedRun split = train(spec, data, "none;conv1=1@cpu,3@any", 1, samples);
  ASSERT_EQ(split.micro_batches, 3u);
  expect_same_training(spec, whole, split);
}

// STARCNN_FOLD_UPDATE=1 folds an update only into a chain that is the only reader of the weights:
// on CPU workers alone there is none (a single network runs layer tasks, pinned chains all read
// the weights, a sample split's first network is not a chain), so every step keeps its update
// task and trains as before. A value other than 0 or 1 is refused.
TEST_P(TrainerMicroBatchesTest, FoldAskedWithoutAChainToFoldIntoChangesNothing) {
  const NetworkSpec spec = parse_network(kNet, "fold.net");
  const Dataset data = random_dataset(40);
  const TrainedRun whole = train(spec, data, "none", 1);
  testing::ScopedEnv fold("STARCNN_FOLD_UPDATE", "1");
  SampleSplit samples;
  samples.cpu_samples = 5;
  samples.cpu_micro_batches = 1;
  const int workers = int(starpu_cpu_worker_get_count());
  const TrainedRun runs[] = {train(spec, data, "none", 1),
                             train(spec, data, "cpu", std::max(2, std::min(workers, 4))),
                             train(spec, data, "none", 1, samples)};
  EXPECT_TRUE(runs[2].packed_exchange);
  for (const TrainedRun &run : runs) {
    EXPECT_FALSE(run.folds_update);
    expect_same_training(spec, whole, run);
  }
  testing::ScopedEnv bad("STARCNN_FOLD_UPDATE", "yes");
  EXPECT_THROW(train(spec, data, "none", 1), std::invalid_argument);
}

// A sample split whose parameters are each one part updated off the CPU exchanges packed
// weights and gradients with its CPU networks (ParameterSet::use_host_mirror): one CPU chain
// pinned (one task reading the packed weights), and two left to the scheduler (layer tasks).
TEST_P(TrainerMicroBatchesTest, PackedSampleSplitTrainsLikeTheWholeBatch) {
  const NetworkSpec spec = parse_network(kNet, "packed.net");
  const Dataset data = random_dataset(40);
  const TrainedRun whole = train(spec, data, "none", 1);
  ASSERT_FALSE(whole.packed_exchange);
  // The chains' gradients added as each chain ends, from one packed vector a chain (the default;
  // a chain left to the scheduler writes the parameters' slots) or from the parameters' slots;
  // summed as one task, and as 3 slices side by side (PackedSlices), pinned to CPU workers or left
  // to the scheduler.
  struct Sum {
    const char *mode, *slices, *pinned;
  };
  const Sum sums[] = {{"packed", "1", "1"},
                      {"add", "1", "1"},
                      {"slices", "1", "1"},
                      {"slices", "3", "1"},
                      {"slices", "3", "0"}};
  for (const auto &[how, slices, pinned] : sums)
    for (const char *mirror : {"both", "copy"})
      for (int chains : {1, 2}) {
        SCOPED_TRACE(std::to_string(chains) + " CPU micro-batches, mirror updated by " + mirror +
                     ", gradients summed by " + how + " in " + slices + " slices, pinned " +
                     pinned);
        testing::ScopedEnv grad_sum("STARCNN_CPU_GRAD_SUM", how);
        testing::ScopedEnv mode("STARCNN_MIRROR_UPDATE", mirror);
        testing::ScopedEnv sum("STARCNN_SUM_SLICES", slices);
        testing::ScopedEnv pin("STARCNN_PIN_SUM_SLICES", pinned);
        SampleSplit samples;
        samples.cpu_samples = 5;
        samples.cpu_micro_batches = chains;
        const TrainedRun split = train(spec, data, "none", 1, samples, chains == 1);
        ASSERT_EQ(split.micro_batches, size_t(chains + 1));
        EXPECT_TRUE(split.packed_exchange);
        expect_same_training(spec, whole, split);
        // The CPU chains' copy of the weights is the weights, to the bit, after the last update.
        EXPECT_EQ(split.mirror_differences, 0u);
      }
}

// Two ranks that see the same samples, in one process: every gradient part the trainer hands
// to the rank sum is doubled (a copy added back), the loss statistics left as they are.
class TwoEqualRanks : public RankSum {
 public:
  void sum_gradients(ParameterSet &params) override {
    for (auto &p : params.all())
      for (size_t part = 0; part < p->part_count(); ++part) {
        Tensor &grad = p->grad(part);
        std::unique_ptr<Tensor> &copy = copies_[grad.handle()];  // one per part, every step
        if (!copy) copy = std::make_unique<Tensor>(std::vector<int>{int(grad.size())}, "copy");
        submit_sum_packed({{grad.handle()}}, copy->handle());
        submit_add_all(grad.handle(), {copy->handle()}, Where::cpu);
      }
  }
  void sum(const Tensor &) override {}
  uint64_t bytes_sent() const override { return 0; }
  uint64_t bytes_received() const override { return 0; }

 private:
  std::map<starpu_data_handle_t, std::unique_ptr<Tensor>> copies_;
};

// Across ranks a sample split keeps its CPU chains' gradients in the parameters' slots, which
// the rank sum adds: doubled, the split trains as the whole batch does with its gradients
// doubled (the packed exchange would leave the CPU chains' share out of the sum).
TEST_P(TrainerMicroBatchesTest, SampleSplitAcrossRanksSumsTheCpuChainsGradients) {
  const NetworkSpec spec = parse_network(kNet, "ranks.net");
  const Dataset data = random_dataset(40);
  TwoEqualRanks whole_ranks, split_ranks;
  const TrainedRun whole = train(spec, data, "none", 1, SampleSplit(), true, true, &whole_ranks);
  SampleSplit samples;
  samples.cpu_samples = 5;
  samples.cpu_micro_batches = 2;
  const TrainedRun split = train(spec, data, "none", 1, samples, true, true, &split_ranks);
  EXPECT_FALSE(split.packed_exchange);
  expect_same_training(spec, whole, split);
}

// An unknown way of updating the host mirror or of summing the CPU chains' gradients.
TEST_P(TrainerMicroBatchesTest, UnknownMirrorChoicesAreRefused) {
  const NetworkSpec spec = parse_network(kNet, "mirror.net");
  ParameterSet params(spec, parse_network_plan("none"), {int(starpu_cpu_worker_get_count()), 0});
  const std::pair<const char *, const char *> choices[] = {{"STARCNN_MIRROR_UPDATE", "sideways"},
                                                           {"STARCNN_CPU_GRAD_SUM", "tree"},
                                                           {"STARCNN_CUDA_PACKED_GRADS", "yes"}};
  for (const auto &[variable, value] : choices) {
    SCOPED_TRACE(std::string(variable) + "=" + value);
    testing::ScopedEnv choice(variable, value);
    EXPECT_THROW(params.use_host_mirror(), std::invalid_argument);
    EXPECT_EQ(params.host_weights(), nullptr);
  }
}

TEST_P(TrainerMicroBatchesTest, NonsenseSumSlicesAreRefused) {
  const NetworkSpec spec = parse_network(kNet, "slices.net");
  ParameterSet params(spec, parse_network_plan("none"), {int(starpu_cpu_worker_get_count()), 0});
  for (const char *slices : {"0", "three", "2x", "", "99999999"}) {
    SCOPED_TRACE(std::string("STARCNN_SUM_SLICES='") + slices + "'");
    testing::ScopedEnv sum("STARCNN_SUM_SLICES", slices);
    EXPECT_THROW(params.use_host_mirror(), std::invalid_argument);
    EXPECT_EQ(params.host_weights(), nullptr);
  }
}

// The mirror's packed layout is one SGD task's vectors: parameters updated on two sides (conv1 on
// any worker, the rest on CUDA) or on the CPU get none (the plans are only parsed: no CUDA needed).
TEST_P(TrainerMicroBatchesTest, PackedExchangeNeedsOneUpdateSideOffTheCpu) {
  const NetworkSpec spec = parse_network(kNet, "sides.net");
  const MachineWorkers one_gpu{2, 1};
  ParameterSet on_cuda(spec, parse_network_plan("cuda"), one_gpu);
  EXPECT_TRUE(on_cuda.use_host_mirror());
  ParameterSet two_sides(spec, parse_network_plan("cuda;conv1=4@any"), one_gpu);
  EXPECT_FALSE(two_sides.use_host_mirror());
  EXPECT_EQ(two_sides.host_weights(), nullptr);
  ParameterSet on_cpu(spec, parse_network_plan("cpu"), one_gpu);
  EXPECT_FALSE(on_cpu.use_host_mirror());
}

// Which chains write packed gradients (the plans are only parsed: no CUDA needed): a CPU chain's
// slot gets a vector of its own with the packed sum, the CUDA chain's slot 0 the CUDA side's
// packed gradients by default or when asked (STARCNN_CUDA_PACKED_GRADS=1), not with =0, and only
// where every convolution's weight starts 16-byte aligned in the layout; none with the
// per-parameter adds.
TEST_P(TrainerMicroBatchesTest, PackedChainGradientsWhereAskedAndAligned) {
  const MachineWorkers one_gpu{2, 1};
  // kNet's conv2.weight starts at 40 floats; with 5 filters in conv1, at 50.
  const NetworkSpec aligned = parse_network(kNet, "aligned.net");
  const NetworkSpec misaligned = parse_network(
      "input 1 12 12\nconv 5 3\nrelu\nmaxpool 2\nconv 6 3 pad=1\nrelu\nflatten\nlinear 5\n",
      "misaligned.net");
  struct Case {
    const NetworkSpec *spec;
    const char *sum, *cuda;
    bool cpu_packed, cuda_packed;
  };
  const Case cases[] = {{&aligned, "packed", nullptr, true, true},
                        {&aligned, "packed", "1", true, true},
                        {&aligned, "packed", "0", true, false},
                        {&misaligned, "packed", "1", true, false},
                        {&aligned, "add", "1", false, false}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec->source + " STARCNN_CPU_GRAD_SUM=" + c.sum +
                 " STARCNN_CUDA_PACKED_GRADS=" + (c.cuda ? c.cuda : "(unset)"));
    testing::ScopedEnv grad_sum("STARCNN_CPU_GRAD_SUM", c.sum);
    testing::ScopedEnv cuda_grads("STARCNN_CUDA_PACKED_GRADS", c.cuda);
    ParameterSet params(*c.spec, parse_network_plan("cuda"), one_gpu);
    params.use_grad_slots(2);
    ASSERT_TRUE(params.use_host_mirror());
    const Tensor *cpu = params.chain_grads(1, false);
    EXPECT_EQ(cpu != nullptr, c.cpu_packed);
    if (cpu) {
      EXPECT_EQ(cpu->size(), params.host_weights()->size());
    }
    EXPECT_EQ(params.chain_grads(0, true) != nullptr, c.cuda_packed);
    EXPECT_EQ(params.chain_grads(0, false), nullptr);  // slot 0 is the update side's
    if (c.cpu_packed) {                                // slot 2 of 2: past the slots
      EXPECT_THROW(params.chain_grads(2, false), std::invalid_argument);
    }
  }
}

// A whole-CPU plan's micro-batches, each pinned to a CPU worker of its own (as many as workers),
// and the same left to the scheduler.
TEST_P(TrainerMicroBatchesTest, PinnedCpuChainsTrainLikeTheWholeBatch) {
  const int workers = int(starpu_cpu_worker_get_count());
  if (workers < 2) GTEST_SKIP() << "pinning needs 2 CPU workers, StarPU has " << workers;
  const NetworkSpec spec = parse_network(kNet, "pinned.net");
  const Dataset data = random_dataset(40);
  const TrainedRun whole = train(spec, data, "none", 1);
  for (bool pin : {true, false}) {
    SCOPED_TRACE(pin ? "pinned" : "scheduled");
    const TrainedRun cut = train(spec, data, "cpu", std::min(workers, 4), SampleSplit(), pin);
    expect_same_training(spec, whole, cut);
  }
}

// The same with STARCNN_CPU_ONLY_SUM=packed: the chains past the first add their packed gradients
// into one sum as each ends, which the update adds in (a chain left to the scheduler adds its
// parameters' slots).
TEST_P(TrainerMicroBatchesTest, PackedCpuSumTrainsLikeTheWholeBatch) {
  const int workers = int(starpu_cpu_worker_get_count());
  const NetworkSpec spec = parse_network(kNet, "cpu_sum.net");
  const Dataset data = random_dataset(40);
  const TrainedRun whole = train(spec, data, "none", 1);
  testing::ScopedEnv sum("STARCNN_CPU_ONLY_SUM", "packed");
  for (bool pin : {true, false}) {
    if (pin && workers < 2) continue;  // pinning needs 2 CPU workers
    SCOPED_TRACE(pin ? "pinned" : "scheduled");
    const TrainedRun cut =
        train(spec, data, "cpu", std::max(2, std::min(workers, 4)), SampleSplit(), pin);
    ASSERT_FALSE(cut.packed_exchange);  // no host weights: the chains read the parameters
    expect_same_training(spec, whole, cut);
  }
}

// Which sets take the packed CPU sum (the plans are only parsed): only when asked, only a CPU
// plan whose parameters are each one part, not a split or CUDA plan; a nonsense choice is refused.
TEST_P(TrainerMicroBatchesTest, PackedCpuSumOnlyForWholeCpuPlans) {
  const NetworkSpec spec = parse_network(kNet, "cpu_sum_plans.net");
  const MachineWorkers one_gpu{2, 1};
  {
    ParameterSet flat(spec, parse_network_plan("cpu"), one_gpu);
    EXPECT_FALSE(flat.use_cpu_packed_sum());  // off by default
  }
  testing::ScopedEnv sum("STARCNN_CPU_ONLY_SUM", "packed");
  ParameterSet cpu(spec, parse_network_plan("cpu"), one_gpu);
  cpu.use_grad_slots(3);
  EXPECT_TRUE(cpu.use_cpu_packed_sum());
  EXPECT_EQ(cpu.host_weights(), nullptr);
  const Tensor *packed = cpu.chain_grads(2, false);
  ASSERT_NE(packed, nullptr);
  size_t total = 0;
  for (const auto &p : cpu.all()) total += p->size();
  EXPECT_EQ(packed->size(), total);
  EXPECT_EQ(cpu.chain_grads(0, false), nullptr);  // slot 0 is the update's own
  ParameterSet split(spec, parse_network_plan("cpu;conv2=2@cpu,4@cpu"), one_gpu);
  EXPECT_FALSE(split.use_cpu_packed_sum());
  ParameterSet on_cuda(spec, parse_network_plan("cuda"), one_gpu);
  EXPECT_FALSE(on_cuda.use_cpu_packed_sum());
  testing::ScopedEnv nonsense("STARCNN_CPU_ONLY_SUM", "tree");
  ParameterSet refused(spec, parse_network_plan("cpu"), one_gpu);
  EXPECT_THROW(refused.use_cpu_packed_sum(), std::invalid_argument);
}

// The convolutions with their ReLU (conv1 with its maxpool too) as one task each way train like
// the separate ops, whole or in micro-batches.
TEST_P(TrainerMicroBatchesTest, FusedLayersTrainLikeSeparateOps) {
  const NetworkSpec spec = parse_network(kNet, "fused.net");
  const Dataset data = random_dataset(40);
  const TrainedRun separate = train(spec, data, "cpu", 1, SampleSplit(), false, false);
  expect_same_training(spec, separate, train(spec, data, "cpu", 1, SampleSplit(), false, true));
  expect_same_training(spec, separate, train(spec, data, "cpu", 2, SampleSplit(), false, true));
}

// pin_cpu_chains gives the CPU chains (and only them) CPU workers 0, 1, ... (1, 2, ... beside a
// GPU part) when there are 2 to cpu_workers of them; automatic pins a sample split's, and a small
// network's CPU plan's.
TEST(TrainerMicroBatches, PinCpuChainsGivesEachCpuChainAWorker) {
  testing::StarpuRuntime runtime("eager", 0);
  ASSERT_TRUE(runtime.started());
  const NetworkSpec spec = parse_network(kNet, "pin.net");
  const MachineWorkers machine{4, 1};
  TrainConfig config;
  config.batch = 64;
  config.micro_batches = 3;
  ParameterSet on_cpu(spec, parse_network_plan("cpu"), machine);
  std::vector<MicroBatch> cut = cut_batch(config, 4);
  pin_cpu_chains(cut, on_cpu, spec, 4);
  for (size_t k = 0; k < cut.size(); ++k) {
    ASSERT_TRUE(cut[k].placement.has_value());
    EXPECT_EQ(cut[k].placement->home, cpu_worker(int(k)));
    EXPECT_TRUE(cut[k].placement->convs_at_home);
  }
  const auto unpinned = [&](const ParameterSet &params, int workers, CpuChains mode,
                            const NetworkSpec &net) {
    std::vector<MicroBatch> same = cut_batch(config, 4);
    pin_cpu_chains(same, params, net, workers, mode);
    for (const MicroBatch &m : same)
      if (m.placement) return false;
    return true;
  };
  const CpuChains pinned = CpuChains::pinned;
  EXPECT_TRUE(unpinned(on_cpu, 2, pinned, spec));                // more chains than workers
  EXPECT_TRUE(unpinned(on_cpu, 4, CpuChains::scheduled, spec));  // not asked
  // automatic: a small network's CPU plan pinned (its chains one task each), wide's scheduled.
  EXPECT_FALSE(unpinned(on_cpu, 4, CpuChains::automatic, spec));
  const NetworkSpec wide = load_network("wide");
  EXPECT_TRUE(unpinned(ParameterSet(wide, parse_network_plan("cpu"), machine), 4,
                       CpuChains::automatic, wide));
  EXPECT_FALSE(unpinned(ParameterSet(wide, parse_network_plan("cpu"), machine), 4, pinned, wide));
  EXPECT_TRUE(unpinned(ParameterSet(spec, parse_network_plan("cuda"), machine), 4, pinned, spec));
  EXPECT_TRUE(unpinned(ParameterSet(spec, parse_network_plan("cpu;conv1=2@cpu,2@cuda"), machine), 4,
                       pinned, spec));  // a split convolution: not every op on the CPU
  config.micro_batches = 1;
  EXPECT_TRUE(unpinned(on_cpu, 4, pinned, spec));  // one chain: its ops may run side by side

  // A sample split: its CPU chains only, pinned or automatic.
  config.samples.cpu_samples = 40;
  config.samples.cpu_micro_batches = 2;
  ParameterSet on_cuda(spec, parse_network_plan("cuda"), machine);
  for (CpuChains mode : {CpuChains::pinned, CpuChains::automatic}) {
    std::vector<MicroBatch> split = cut_batch(config, 4);
    pin_cpu_chains(split, on_cuda, spec, 4, mode);
    ASSERT_EQ(split.size(), 3u);
    EXPECT_FALSE(split[0].placement.has_value());
    EXPECT_EQ(split[1].placement->home, cpu_worker(1));  // worker 0 loads the batches
    EXPECT_EQ(split[2].placement->home, cpu_worker(2));
  }
}

TEST(TrainerMicroBatches, CutBatchPlacesTheSampleSplit) {
  TrainConfig config;
  config.batch = 128;
  config.samples.cpu_samples = 70;
  // 70 samples: 3 chains of 23-24, one per CPU worker but the one loading batches.
  const std::vector<MicroBatch> cut = cut_batch(config, 4);
  ASSERT_EQ(cut.size(), 4u);
  EXPECT_EQ(cut[0].first, 0u);
  EXPECT_EQ(cut[0].size, 58u);
  EXPECT_FALSE(cut[0].placement.has_value());
  size_t next = 58, on_cpu = 0;
  for (size_t m = 1; m < cut.size(); ++m) {
    EXPECT_EQ(cut[m].first, next);
    EXPECT_TRUE(cut[m].size == 23 || cut[m].size == 24) << cut[m].size;
    ASSERT_TRUE(cut[m].placement.has_value());
    EXPECT_EQ(cut[m].placement->home, Where::cpu);
    EXPECT_TRUE(cut[m].placement->convs_at_home);
    next += cut[m].size;
    on_cpu += cut[m].size;
  }
  EXPECT_EQ(on_cpu, 70u);
  // Chains of cpu_chain_samples (16 by default) or more, on the CPU workers but the first.
  config.samples.cpu_samples = 40;  // fewer than 16 samples per worker: fewer chains
  EXPECT_EQ(cut_batch(config, 16).size(), 1u + 2u);
  config.samples.cpu_samples = 120;
  EXPECT_EQ(cut_batch(config, 16).size(), 1u + 7u);
  config.cpu_chain_samples = 8;  // lenet's on 3x32x32: samples:96 runs 12 chains of 8
  config.samples.cpu_samples = 96;
  EXPECT_EQ(cut_batch(config, 15).size(), 1u + 12u);
  EXPECT_EQ(cut_batch(config, 8).size(), 1u + 7u);  // at most one per worker but the first
  config.cpu_chain_samples = 16;
  config.samples.cpu_samples = 6;  // one chain however few
  EXPECT_EQ(cut_batch(config, 16).size(), 1u + 1u);
  config.samples.cpu_samples = 128;  // nothing left for CUDA
  EXPECT_THROW(cut_batch(config, 4), std::invalid_argument);
  config.samples.cpu_samples = 3;
  config.samples.cpu_micro_batches = 4;  // more chains than samples
  EXPECT_THROW(cut_batch(config, 4), std::invalid_argument);
}

// Whether cut_batch gives the CPU share `k` chains of one length.
bool even_chains(TrainConfig config, size_t k, int cpu_workers) {
  config.samples.cpu_samples = int(k);
  const std::vector<MicroBatch> cut = cut_batch(config, cpu_workers);
  for (size_t m = 2; m < cut.size(); ++m)
    if (cut[m].size != cut[1].size) return false;
  return true;
}

// Random batches, workers, chain minimums and wanted shares: the share chosen cuts (by
// cut_batch) into chains of one length, and no share nearer the wanted one does.
TEST(TrainerMicroBatches, EvenChainShareIsTheNearestEvenCut) {
  std::mt19937 gen(5);
  for (int trial = 0; trial < 300; ++trial) {
    TrainConfig config;
    config.batch = std::uniform_int_distribution<size_t>(2, 300)(gen);
    config.cpu_chain_samples = std::uniform_int_distribution<size_t>(1, 20)(gen);
    const int workers = std::uniform_int_distribution<int>(1, 20)(gen);
    const size_t wanted = std::uniform_int_distribution<size_t>(1, config.batch - 1)(gen);
    SCOPED_TRACE("batch " + std::to_string(config.batch) + ", chains of " +
                 std::to_string(config.cpu_chain_samples) + "+, " + std::to_string(workers) +
                 " workers, wanted " + std::to_string(wanted));
    const size_t k = even_chain_share(wanted, config.batch, workers, config.cpu_chain_samples);
    ASSERT_GE(k, 1u);
    ASSERT_LE(k, config.batch - 1);
    EXPECT_TRUE(even_chains(config, k, workers));
    const size_t off = k > wanted ? k - wanted : wanted - k;
    for (size_t j = 1; j < config.batch; ++j) {
      const size_t j_off = j > wanted ? j - wanted : wanted - j;
      if (j_off < off || (j_off == off && j < k)) {
        EXPECT_FALSE(even_chains(config, j, workers)) << j << " is nearer and even";
      }
    }
  }
  // The H100's MPS lenet b256 (15 CPU workers, chains of 8 or more): 108 ran 13 chains of 8-9.
  EXPECT_EQ(even_chain_share(108, 256, 15, 8), 104u);
  EXPECT_EQ(even_chain_share(129, 256, 15, 8), 126u);
}

TEST(TrainerMicroBatches, MoreMicroBatchesThanSamplesIsRefused) {
  testing::StarpuRuntime runtime("eager", 0);
  ASSERT_TRUE(runtime.started());
  const NetworkSpec spec = parse_network("input 1 12 12\nflatten\nlinear 5\n", "flat.net");
  const Dataset data = random_dataset(16);
  ParameterSet params(spec, parse_network_plan("none"), {1, 0});
  TrainConfig config;
  config.batch = 4;
  config.micro_batches = 5;
  EXPECT_THROW(Trainer(spec, params, data, config), std::invalid_argument);
  config.micro_batches = 0;
  EXPECT_THROW(Trainer(spec, params, data, config), std::invalid_argument);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(TrainerMicroBatchesTest);

// Four CPU workers on any machine: a sample split's three chains pinned beside the one that loads.
class ClaimingChainsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    RuntimeOptions options;  // more workers than this machine's cores may have: left unbound
    options.scheduler = GetParam();
    options.ncuda = 0;
    options.ncpu = 4;
    runtime_ = std::make_unique<Runtime>(options);
    if (starpu_cpu_worker_get_count() != 4) GTEST_SKIP() << "STARPU_NCPU asks another count";
  }
  void TearDown() override { runtime_.reset(); }
  testing::ScopedEnv unbound_{"STARPU_WORKERS_NOBIND", "1"};
  std::unique_ptr<Runtime> runtime_;
};

SampleSplit claiming_split(int samples, int chains, int block) {
  SampleSplit split;
  split.cpu_samples = samples;
  split.cpu_micro_batches = chains;
  split.cpu_block = block;
  return split;
}

// samples:7/3xB: 7 samples of each step of 8 in chains of 3, 2 and 2 that claim blocks of B
// from all three (a chain's last block shorter where B does not divide it; B past the largest
// chain cut to it) train as the whole batch does.
TEST_P(ClaimingChainsTest, ClaimingChainsTrainLikeTheWholeBatch) {
  const NetworkSpec spec = parse_network(kNet, "claims.net");
  const Dataset data = random_dataset(40);
  const TrainedRun whole = train(spec, data, "none", 1);
  for (int block : {1, 2, 5}) {
    SCOPED_TRACE("blocks of " + std::to_string(block));
    const TrainedRun split = train(spec, data, "none", 1, claiming_split(7, 3, block));
    ASSERT_EQ(split.micro_batches, 4u);
    EXPECT_EQ(split.claiming_chains, 3u);
    EXPECT_TRUE(split.packed_exchange);
    expect_same_training(spec, whole, split);
    EXPECT_EQ(split.mirror_differences, 0u);
  }
}

// Chains that cannot claim are refused with the reason: left to the scheduler, more of them than
// CPU workers to pin, their gradients not packed.
TEST_P(ClaimingChainsTest, ChainsThatCannotClaimAreRefused) {
  const NetworkSpec spec = parse_network(kNet, "refused.net");
  const Dataset data = random_dataset(40);
  const auto error_of = [&](SampleSplit split, bool pin) -> std::string {
    try {
      train(spec, data, "none", 1, split, pin);
    } catch (const std::invalid_argument &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(claiming_split(7, 3, 2), false).find("pinned"), std::string::npos);
  EXPECT_NE(error_of(claiming_split(7, 7, 2), true).find("pinned"), std::string::npos);
  testing::ScopedEnv grad_sum("STARCNN_CPU_GRAD_SUM", "add");
  const std::string unpacked = error_of(claiming_split(7, 3, 2), true);
  EXPECT_NE(unpacked.find("samples:7/3x2"), std::string::npos) << unpacked;
  EXPECT_NE(unpacked.find("packed"), std::string::npos) << unpacked;
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(ClaimingChainsTest);

}  // namespace
}  // namespace starcnn
