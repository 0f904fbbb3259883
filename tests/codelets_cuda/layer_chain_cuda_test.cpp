// A network wholly on CUDA trained as one task per micro-batch (LayerChain), its kernels launched
// one by one or replayed as CUDA graphs, against the same training as one task per layer on CUDA
// and on the CPU workers: from the same weights, on the same batches, every run ends with the same
// losses, weights and momenta to float32 rounding; and with each step's update run at the start
// of the next step's chain. Skips where StarPU finds no CUDA worker.
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "model/train/trainer.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/scoped_env.h"
#include "tests/support/small_dataset.h"
#include "tests/support/small_training.h"

#ifdef STARCNN_USE_CUDA
#include "codelets/support/cuda_graph_cache.h"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace starcnn {
namespace {

class LayerChainCudaTest : public testing::CudaSchedulerTest {};

// Pools, a padded convolution, and linear layers with and without a ReLU.
const char *const kNet =
    "input 1 12 12\nconv 4 3\nrelu\nmaxpool 2\nconv 6 3 pad=1\nrelu\nflatten\nlinear 16\nrelu\n"
    "linear 5\n";

struct ChainRun : testing::TrainedWeights {
  uint64_t tasks_per_step = 0;
  bool packed_exchange = false;  // a sample split's CPU chains read the host mirror
  bool folds_update = false;     // each step's update ran in the next step's chain
};

ChainRun train(const NetworkSpec &spec, const std::string &plan, CudaChain chain,
               SampleSplit samples = SampleSplit()) {
  const Dataset data = testing::small_dataset(48, 1, 12, 12, 5, 11);  // 6 steps of 8 an epoch
  ParameterSet params(spec, parse_network_plan(plan),
                      {int(starpu_cpu_worker_get_count()), int(starpu_cuda_worker_get_count())});
  params.initialize(3);
  TrainConfig config = testing::small_training_config();
  config.cuda_chain = chain;
  config.samples = samples;
  Trainer trainer(spec, params, data, config);
  ChainRun run;
  static_cast<testing::TrainedWeights &>(run) = testing::train_two_epochs(trainer, params);
  run.tasks_per_step = trainer.tasks_per_step();
  run.packed_exchange = params.host_weights() != nullptr;
  run.folds_update = trainer.folds_update();
  return run;
}

double max_abs(const std::vector<float> &v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

void expect_same(const ChainRun &want, const ChainRun &got) {
  ASSERT_EQ(got.losses.size(), 12u);
  ASSERT_EQ(want.losses.size(), got.losses.size());
  for (size_t s = 0; s < want.losses.size(); ++s)
    EXPECT_NEAR(got.losses[s], want.losses[s], 1e-4 * std::fabs(want.losses[s])) << "step " << s;
  ASSERT_EQ(got.weights.size(), want.weights.size());
  for (size_t t = 0; t < want.weights.size(); ++t) {
    SCOPED_TRACE(want.weights[t].name);
    const std::vector<float> &w = want.weights[t].values, &g = got.weights[t].values;
    const std::vector<float> &wm = want.momenta[t].values, &gm = got.momenta[t].values;
    ASSERT_EQ(g.size(), w.size());
    // The momentum is the sum of the steps' gradients: the weights moved by about lr times it.
    const double moved = 0.05 * max_abs(wm);
    ASSERT_GT(moved, 0.0) << "training moved no weight";
    for (size_t j = 0; j < w.size(); ++j)
      ASSERT_NEAR(g[j], w[j], 1e-3 * moved + 4 * 1.2e-7 * max_abs(w)) << "element " << j;
    for (size_t j = 0; j < wm.size(); ++j)
      ASSERT_NEAR(gm[j], wm[j], 1e-3 * max_abs(wm) + 1e-7) << "momentum element " << j;
  }
}

TEST_P(LayerChainCudaTest, ChainsTrainLikeLayerTasks) {
  const NetworkSpec spec = parse_network(kNet, "chain.net");
  const ChainRun cpu = train(spec, "cpu", CudaChain::off);
  const ChainRun layers = train(spec, "cuda", CudaChain::off);
  const ChainRun kernels = train(spec, "cuda", CudaChain::kernels);
#ifdef STARCNN_USE_CUDA
  const uint64_t replays_before = cuda_graph_replays();
#endif
  const ChainRun graph = train(spec, "cuda", CudaChain::graph);
#ifdef STARCNN_USE_CUDA
  // 12 steps, the two batch slots' graphs each captured on its second use.
  EXPECT_GE(cuda_graph_replays() - replays_before, 8u) << "the graphs were not replayed";
#endif
  {
    SCOPED_TRACE("CUDA layer tasks against the CPU");
    expect_same(cpu, layers);
  }
  {
    SCOPED_TRACE("one task launching its kernels");
    expect_same(layers, kernels);
  }
  {
    SCOPED_TRACE("one task replaying a CUDA graph");
    expect_same(layers, graph);
  }
  // Loading the batch, the chain, the update.
  EXPECT_EQ(kernels.tasks_per_step, 3u);
  EXPECT_EQ(graph.tasks_per_step, 3u);
  EXPECT_GT(layers.tasks_per_step, 10u);
  EXPECT_FALSE(graph.folds_update);
}

// Each step's update run at the start of the next step's chain (STARCNN_FOLD_UPDATE=1; the
// warm-up launches' and the last step's as tasks of their own) trains as the update tasks do.
TEST_P(LayerChainCudaTest, FoldedUpdatesTrainLikeUpdateTasks) {
  const NetworkSpec spec = parse_network(kNet, "fold.net");
  const ChainRun layers = train(spec, "cuda", CudaChain::off);
  for (CudaChain chain : {CudaChain::kernels, CudaChain::graph}) {
    SCOPED_TRACE(chain == CudaChain::graph ? "graph" : "kernels");
    testing::ScopedEnv fold("STARCNN_FOLD_UPDATE", "1");
    const ChainRun folded = train(spec, "cuda", chain);
    EXPECT_TRUE(folded.folds_update);
    EXPECT_EQ(folded.tasks_per_step, 2u) << "loading the batch and the chain";
    expect_same(layers, folded);
  }
}

// A sample split, 3 samples of each step of 8 in one CPU chain beside the CUDA chain, trains as
// the CPU does the whole batch, whichever way the chains' gradients meet: the CPU chain's packed
// (STARCNN_CPU_GRAD_SUM=packed) with the CUDA chain's packed too (STARCNN_CUDA_PACKED_GRADS=1) or
// not, or the parameters' slots added or summed in slices. kNet's convolution weights start at 0
// and 40 in the packed layout: 16-byte aligned, so the CUDA chain packs where asked.
TEST_P(LayerChainCudaTest, SampleSplitChainsTrainLikeTheWholeBatch) {
  if (starpu_cpu_worker_get_count() < 2) GTEST_SKIP() << "a sample split needs 2 CPU workers";
  const NetworkSpec spec = parse_network(kNet, "split.net");
  const ChainRun cpu = train(spec, "cpu", CudaChain::off);
  SampleSplit samples;
  samples.cpu_samples = 3;
  samples.cpu_micro_batches = 1;
  const std::pair<const char *, const char *> modes[] = {
      {"packed", "1"}, {"packed", "0"}, {"add", "0"}, {"slices", "0"}};
  for (const auto &[sum, cuda_packed] : modes) {
    SCOPED_TRACE(std::string("STARCNN_CPU_GRAD_SUM=") + sum +
                 " STARCNN_CUDA_PACKED_GRADS=" + cuda_packed);
    testing::ScopedEnv grad_sum("STARCNN_CPU_GRAD_SUM", sum);
    testing::ScopedEnv cuda_grads("STARCNN_CUDA_PACKED_GRADS", cuda_packed);
    const ChainRun split = train(spec, "cuda", CudaChain::graph, samples);
    EXPECT_TRUE(split.packed_exchange);
    EXPECT_FALSE(split.folds_update);
    expect_same(cpu, split);
  }
  // The CUDA side's update folded into its next chain, the host's sum alternating between two
  // vectors; not with the sum in slices (the fold stays off there).
  for (const auto &[sum, cuda_packed] : modes) {
    SCOPED_TRACE(std::string("folded, STARCNN_CPU_GRAD_SUM=") + sum +
                 " STARCNN_CUDA_PACKED_GRADS=" + cuda_packed);
    testing::ScopedEnv fold("STARCNN_FOLD_UPDATE", "1");
    testing::ScopedEnv grad_sum("STARCNN_CPU_GRAD_SUM", sum);
    testing::ScopedEnv cuda_grads("STARCNN_CUDA_PACKED_GRADS", cuda_packed);
    const ChainRun split = train(spec, "cuda", CudaChain::graph, samples);
    EXPECT_EQ(split.folds_update, std::string(sum) != "slices");
    expect_same(cpu, split);
  }
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(LayerChainCudaTest);

}  // namespace
}  // namespace starcnn
