// The plan places every task: recorded at submission (TaskLog), the tasks of one training step
// carry exactly the worker kinds the plan gives them, for an all-CUDA plan, an all-CPU plan, a
// filter split and a sample split's CPU chain. No CUDA worker is needed: the tasks are logged,
// not run.
#include "codelets/support/task_log.h"
#include "model/nn/network.h"
#include "model/nn/network_spec.h"
#include "model/nn/parameter_set.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

namespace starcnn {
namespace {

const MachineWorkers kMachine{4, 1};  // as the plan sees it; StarPU itself runs CPU workers only

// The worker kinds each op of one step of `network` was given: forward, loss and backward (in
// one call with `whole_pass`, else forward and backward in turn), then the update.
std::multimap<std::string, Where> logged_step(const NetworkSpec &spec, ParameterSet &params,
                                              Network &network, bool whole_pass) {
  Tensor images({8, spec.input.c, spec.input.h, spec.input.w}, "images");
  Tensor labels({8}, "labels", ElementType::i32);
  Tensor stats({int(kXentStatsSize)}, "stats");
  std::multimap<std::string, Where> placed;
  TaskLog log;
  if (whole_pass) {
    network.forward_backward(images, labels, stats);
  } else {
    network.forward(images, labels, stats);
    network.backward(images, labels);
  }
  params.submit_update({0.1f, 0.9f, 0.0f, false});
  for (const LoggedTask &t : log.tasks()) placed.emplace(t.op, t.where);
  return placed;
}

std::multimap<std::string, Where> step_tasks(const NetworkSpec &spec, const std::string &plan,
                                             std::optional<NetworkPlacement> placement = {},
                                             const MachineWorkers &machine = kMachine) {
  ParameterSet params(spec, parse_network_plan(plan), machine);
  Network network(spec, params, 8, 8, 0, placement);
  return logged_step(spec, params, network, false);
}

// How many SGD update tasks `tasks` holds with each worker-kind mask.
std::map<Where, int> update_tasks(const std::multimap<std::string, Where> &tasks) {
  std::map<Where, int> updates;
  const auto [first, last] = tasks.equal_range("sgd_update");
  for (auto t = first; t != last; ++t) ++updates[t->second];
  return updates;
}

class PlacementTest : public ::testing::Test {
 protected:
  testing::StarpuRuntime runtime_{"eager", 0};
  const NetworkSpec spec_ = load_network("lenet");
};

TEST_F(PlacementTest, AnAllCudaPlanMasksEveryTaskToCuda) {
  const auto tasks = step_tasks(spec_, "cuda");
  ASSERT_GT(tasks.size(), 10u);  // a whole step of lenet was logged
  for (const auto &[op, where] : tasks)
    EXPECT_EQ(where, Where::cuda) << op << " on " << where_name(where);
  EXPECT_EQ(update_tasks(tasks), (std::map<Where, int>{{Where::cuda, 1}}));
}

TEST_F(PlacementTest, AnAllCpuPlanMasksEveryTaskToTheCpu) {
  const auto tasks = step_tasks(spec_, "cpu");
  for (const auto &[op, where] : tasks)
    EXPECT_EQ(where, Where::cpu) << op << " on " << where_name(where);
  EXPECT_EQ(update_tasks(tasks), (std::map<Where, int>{{Where::cpu, 1}}));
}

TEST_F(PlacementTest, AFilterSplitPlacesItsPartsAndKeepsEveryOtherOpOnCuda) {
  const auto tasks = step_tasks(spec_, "cuda;conv2=4@cpu/2,12@cuda");
  // conv2's CPU part in 2 sample blocks: forward, backward filter and backward data each, and the
  // SGD update of its weight and bias part runs where the part lives: one task for both.
  int cpu_conv_tasks = 0, cpu_updates = 0, merges = 0;
  for (const auto &[op, where] : tasks) {
    const bool conv = op.rfind("conv2d_", 0) == 0, update = op.rfind("sgd", 0) == 0;
    if (where == Where::cpu && (conv || update)) {
      cpu_conv_tasks += conv;
      cpu_updates += update;
    } else {
      EXPECT_EQ(where, Where::cuda) << op << " on " << where_name(where);
    }
    merges += op == "merge" || op == "split";
  }
  EXPECT_EQ(cpu_conv_tasks, 6);
  EXPECT_EQ(cpu_updates, 1);
  EXPECT_EQ(merges, 2);
  EXPECT_EQ(update_tasks(tasks), (std::map<Where, int>{{Where::cpu, 1}, {Where::cuda, 1}}));
}

// Every parameter and part whose plan gives the same worker kinds shares one update task.
TEST_F(PlacementTest, EachSideUpdatesItsParametersInOneTask) {
  EXPECT_EQ(update_tasks(step_tasks(spec_, "cuda;conv1=2@cpu,1@any,3@cuda;conv2=10@any,6@cpu")),
            (std::map<Where, int>{{Where::cpu, 1}, {Where::cuda, 1}, {Where::any, 1}}));
  // Both convolutions split between any worker and the CPU, the linear layers at home (CUDA).
  EXPECT_EQ(update_tasks(step_tasks(spec_, "2@any,1@cpu,3@any;conv2=5@any,11@cpu")),
            (std::map<Where, int>{{Where::cpu, 1}, {Where::cuda, 1}, {Where::any, 1}}));
  EXPECT_EQ(update_tasks(step_tasks(spec_, "cpu;conv2=5@cuda,11@cpu")),
            (std::map<Where, int>{{Where::cpu, 1}, {Where::cuda, 1}}));
  EXPECT_EQ(update_tasks(step_tasks(load_network("wide"), "cuda")),
            (std::map<Where, int>{{Where::cuda, 1}}));
}

// A CPU side of 256 K floats or more updates each layer in a task of its own: wide's seven
// layers; lenet's 62 K stay one task (above).
TEST_F(PlacementTest, ALargeCpuSideUpdatesEachLayerInItsOwnTask) {
  const NetworkSpec wide = load_network("wide");
  const auto tasks = step_tasks(wide, "cpu");
  EXPECT_EQ(update_tasks(tasks), (std::map<Where, int>{{Where::cpu, 7}}));
  // The CUDA side of the same network stays one task.
  EXPECT_EQ(update_tasks(step_tasks(wide, "cpu;conv6=256@cuda")),
            (std::map<Where, int>{{Where::cpu, 6}, {Where::cuda, 1}}));
}

TEST_F(PlacementTest, ASampleSplitsCpuChainRunsEveryOpOnTheCpu) {
  const auto tasks = step_tasks(spec_, "samples:4", NetworkPlacement{Where::cpu, true});
  for (const auto &[op, where] : tasks) {
    if (op.rfind("sgd", 0) == 0)
      EXPECT_EQ(where, Where::cuda) << "weights live on CUDA";
    else
      EXPECT_EQ(where, Where::cpu) << op << " on " << where_name(where);
  }
  EXPECT_EQ(update_tasks(tasks), (std::map<Where, int>{{Where::cuda, 1}}));
}

// conv2 split over two GPUs: each part's conv and update tasks are pinned to its device, the merges
// and every other op stay on any CUDA worker.
TEST_F(PlacementTest, PartsOnNamedCudaDevicesArePinnedToThem) {
  const auto tasks = step_tasks(spec_, "cuda;conv2=6@cuda0,10@cuda1", {}, MachineWorkers{4, 2});
  std::map<std::string, int> pinned;  // "cuda1 conv2d_forward" -> tasks
  for (const auto &[op, where] : tasks) {
    const bool conv = op.rfind("conv2d_", 0) == 0, update = op.rfind("sgd", 0) == 0;
    if (device_of(where) >= 0) {
      EXPECT_TRUE(conv || update) << op << " pinned to " << where_name(where);
      ++pinned[where_name(where) + " " + (conv ? op : "sgd")];
    } else {
      EXPECT_EQ(where, Where::cuda) << op << " on " << where_name(where);
    }
  }
  // One forward, backward-filter and backward-data task per part (GPU parts are one task each),
  // and one SGD task per device, updating its part's weight and bias together.
  for (const char *device : {"cuda0", "cuda1"}) {
    int convs = 0;
    for (const auto &[key, count] : pinned)
      if (key.rfind(std::string(device) + " conv2d_", 0) == 0) convs += count;
    EXPECT_EQ(convs, 3) << device;
    EXPECT_EQ(pinned[std::string(device) + " sgd"], 1) << device;
  }
  EXPECT_EQ(pinned.count("cuda2 sgd"), 0u);
}

TEST_F(PlacementTest, AWholeNetworkOnOneCudaDevicePinsEveryTask) {
  const auto tasks = step_tasks(spec_, "cuda1", {}, MachineWorkers{4, 2});
  ASSERT_GT(tasks.size(), 10u);  // a whole step of lenet was logged
  for (const auto &[op, where] : tasks)
    EXPECT_EQ(where, cuda_device(1)) << op << " on " << where_name(where);
}

// Submitting for real: a task pinned to a CUDA device StarPU lacks is refused with an error
// naming the op and the device, before StarPU sees it (this runtime has no CUDA worker).
TEST_F(PlacementTest, APinnedTaskWithoutItsDeviceIsAClearError) {
  try {
    pinned_worker(cuda_device(3), "conv2d_forward");
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("conv2d_forward is pinned to CUDA device 3 (cuda3) but "
                                         "StarPU has no worker for it (0 CUDA workers)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(pinned_worker(Where::cuda, "relu"), -1);
  EXPECT_EQ(pinned_worker(Where::cpu, "relu"), -1);
}

// A training step's ops (forward_backward, then the update) of a network built with `chain`.
std::multimap<std::string, Where> chained_step(const NetworkSpec &spec, const std::string &plan,
                                               CudaChain chain,
                                               const MachineWorkers &machine = kMachine) {
  ParameterSet params(spec, parse_network_plan(plan), machine);
  Network network(spec, params, 8, 8, 0, std::nullopt, true, chain);
  return logged_step(spec, params, network, true);
}

// A network wholly on CUDA trains as one CUDA task (and its update), whether it replays a graph or
// launches its kernels; layer by layer with the chain off.
TEST_F(PlacementTest, AWholeCudaNetworkTrainsAsOneCudaChainTask) {
  for (CudaChain chain : {CudaChain::graph, CudaChain::kernels}) {
    const auto tasks = chained_step(spec_, "cuda", chain);
    EXPECT_EQ(tasks, (std::multimap<std::string, Where>{{"cuda_chain", Where::cuda},
                                                        {"sgd_update", Where::cuda}}));
  }
  for (const std::string net : {"lenet", "wide"}) {
    const auto pinned = chained_step(load_network(net), "cuda1", CudaChain::graph, {4, 2});
    EXPECT_EQ(pinned, (std::multimap<std::string, Where>{{"cuda_chain", cuda_device(1)},
                                                         {"sgd_update", cuda_device(1)}}))
        << net;
  }
  const auto layers = chained_step(spec_, "cuda", CudaChain::off);
  EXPECT_GT(layers.size(), 10u);
  EXPECT_EQ(layers.count("cuda_chain"), 0u);
}

// A convolution split by filters, cut into sample blocks, or placed off CUDA keeps the layer tasks.
TEST_F(PlacementTest, ANetworkNotWhollyOnCudaKeepsItsLayerTasks) {
  for (const char *plan :
       {"cuda;conv2=4@cpu/2,12@cuda", "cuda;conv2=16@cuda/2", "cuda;conv1=cpu", "cpu", "none"}) {
    const auto tasks = chained_step(spec_, plan, CudaChain::graph);
    EXPECT_EQ(tasks.count("cuda_chain"), 0u) << plan;
    EXPECT_GT(tasks.size(), 5u) << plan;
  }
}

TEST_F(PlacementTest, NoneLeavesEveryTaskToTheScheduler) {
  const auto tasks = step_tasks(spec_, "none");
  for (const auto &[op, where] : tasks) EXPECT_EQ(where, Where::any) << op;
  EXPECT_EQ(update_tasks(tasks), (std::map<Where, int>{{Where::any, 1}}));
}

}  // namespace
}  // namespace starcnn
