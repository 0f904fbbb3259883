// run_with_cpu_workers_parked on two CPU workers, under every test scheduler: while one is parked
// every CPU task runs on the other; afterwards the parked one runs tasks again (one pinned to it),
// also after the work threw; keep >= the worker count parks nothing; perf-model measurements taken
// before parking are still saved at shutdown (creating StarPU contexts resets its calibrate flag);
// parking never turns on StarPU's blocked-in-parallel checks, which outlive the StarPU instance.
#include "model/runtime/parked_workers.h"

#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>
#include <starpu.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

// libstarpu 1.3's switch for the blocked-in-parallel checks of every
// starpu_worker_can_execute_task: set by the first worker blocked in parallel, never reset, not
// even by starpu_shutdown and starpu_init.
extern "C" int _starpu_worker_parallel_blocks;

namespace starcnn {
namespace {

std::vector<int> ran_on;  // the worker of each task, by the task's index

void record_task(void *[], void *arg) {
  int index = 0;
  starpu_codelet_unpack_args(arg, &index);
  ran_on[size_t(index)] = starpu_worker_get_id();
}

starpu_codelet record_codelet() {
  starpu_codelet cl{};
  cl.cpu_funcs[0] = record_task;
  cl.nbuffers = 0;
  cl.name = "parked_workers_record";
  return cl;
}

// Runs `count` CPU tasks (on worker `pin` when it is not negative), returns the workers that ran
// them.
std::set<int> run_tasks(int count, int pin = -1) {
  starpu_codelet cl = record_codelet();
  ran_on.assign(size_t(count), -1);
  for (int i = 0; i < count; ++i) {
    const int ret = pin < 0 ? starpu_task_insert(&cl, STARPU_VALUE, &i, sizeof(i), 0)
                            : starpu_task_insert(&cl, STARPU_VALUE, &i, sizeof(i),
                                                 STARPU_EXECUTE_ON_WORKER, pin, 0);
    EXPECT_EQ(ret, 0);
  }
  starpu_task_wait_for_all();
  return {ran_on.begin(), ran_on.end()};
}

int cpu_worker(int i) {
  return starpu_worker_get_by_type(STARPU_CPU_WORKER, i);
}

class ParkedWorkersTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
#ifdef STARPU_SIMGRID
    GTEST_SKIP() << "a SimGrid build parks nobody";
#endif
    runtime_.emplace(RuntimeOptions{"", GetParam(), 0, nullptr, nullptr, 2});
    if (starpu_cpu_worker_get_count() < 2) GTEST_SKIP() << "needs two CPU workers";
  }
  void TearDown() override {
    runtime_.reset();
  }
  std::optional<Runtime> runtime_;
};

TEST_P(ParkedWorkersTest, TasksRunOnTheAwakeWorkerAlone) {
  std::set<int> workers;
  run_with_cpu_workers_parked(1, [&] {
    EXPECT_EQ(parked_cpu_workers(), 1);
    workers = run_tasks(40);
  });
  EXPECT_EQ(workers, std::set<int>{cpu_worker(0)});
  EXPECT_EQ(parked_cpu_workers(), 0);
  EXPECT_EQ(run_tasks(4, cpu_worker(1)), std::set<int>{cpu_worker(1)});
}

// Parking leaves contexts behind until StarPU restarts; keeping every worker awake makes none.
TEST_P(ParkedWorkersTest, ParkingContextsLastUntilStarpuRestarts) {
  EXPECT_FALSE(holds_parking_contexts());
  run_with_cpu_workers_parked(2, [] {});  // nobody parked
  EXPECT_FALSE(holds_parking_contexts());
  run_with_cpu_workers_parked(1, [] {});
  EXPECT_TRUE(holds_parking_contexts());
  runtime_.reset();
  runtime_.emplace(RuntimeOptions{"", GetParam(), 0, nullptr, nullptr, 2});
  EXPECT_FALSE(holds_parking_contexts());
}

// The stacks of a later cpu-only run (16 workers, lws) that stalled show a worker in those checks
// (perf/results/h100-2026-12-07-g), and every run after parking paid for them.
TEST_P(ParkedWorkersTest, ParkingLeavesStarpuBlockedInParallelChecksOff) {
  int during = -1;
  std::set<int> workers;
  run_with_cpu_workers_parked(1, [&] {
    during = _starpu_worker_parallel_blocks;
    workers = run_tasks(8);
  });
  EXPECT_EQ(during, 0);
  EXPECT_EQ(_starpu_worker_parallel_blocks, 0);
  EXPECT_EQ(workers, std::set<int>{cpu_worker(0)});
  EXPECT_EQ(run_tasks(4, cpu_worker(1)), std::set<int>{cpu_worker(1)});
}

TEST_P(ParkedWorkersTest, WorkersComeBackWhenTheWorkThrows) {
  EXPECT_THROW(run_with_cpu_workers_parked(1, [] { throw std::runtime_error("work failed"); }),
               std::runtime_error);
  EXPECT_EQ(parked_cpu_workers(), 0);
  EXPECT_EQ(run_tasks(4, cpu_worker(1)), std::set<int>{cpu_worker(1)});
}

// From a task, parking is refused: the task could not wait for the sleepers to wake.
void park_from_task(void *[], void *arg) {
  std::string *error = static_cast<std::string *>(arg);
  try {
    run_with_cpu_workers_parked(1, [] {});
  } catch (const std::logic_error &e) {
    *error = e.what();
  }
}

TEST_P(ParkedWorkersTest, ParkingFromATaskIsRefused) {
  starpu_codelet cl{};
  cl.cpu_funcs[0] = park_from_task;
  cl.nbuffers = 0;
  cl.name = "parked_workers_from_task";
  std::string error;
  ASSERT_EQ(starpu_task_insert(&cl, STARPU_CL_ARGS_NFREE, &error, sizeof(&error), 0), 0);
  starpu_task_wait_for_all();
  EXPECT_NE(error.find("from a task"), std::string::npos) << error;
  EXPECT_EQ(parked_cpu_workers(), 0);
  EXPECT_EQ(run_tasks(4, cpu_worker(1)), std::set<int>{cpu_worker(1)});
}

TEST_P(ParkedWorkersTest, ModelsMeasuredBeforeParkingAreSaved) {
  static starpu_perfmodel model{};
  static std::string symbol;
  symbol = "parked_workers_test_" + GetParam();
  model.type = STARPU_HISTORY_BASED;
  model.symbol = symbol.c_str();
  char path[1024];
  starpu_perfmodel_get_model_path(symbol.c_str(), path, sizeof(path));
  std::remove(path);
  starpu_codelet cl = record_codelet();
  cl.model = &model;
  ran_on.assign(8, -1);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(starpu_task_insert(&cl, STARPU_VALUE, &i, sizeof(i), 0), 0);
  starpu_task_wait_for_all();
  run_with_cpu_workers_parked(1, [] {});
  runtime_.reset();  // starpu_shutdown saves the models
  std::ifstream saved(path);
  EXPECT_TRUE(saved.good()) << path << " was not written at shutdown";
}

TEST_P(ParkedWorkersTest, KeepingEveryWorkerParksNone) {
  run_with_cpu_workers_parked(2, [] {
    EXPECT_EQ(parked_cpu_workers(), 0);
    EXPECT_EQ(run_tasks(4, cpu_worker(1)), std::set<int>{cpu_worker(1)});
  });
  EXPECT_THROW(run_with_cpu_workers_parked(0, [] {}), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, ParkedWorkersTest,
                         ::testing::ValuesIn(starcnn::testing::test_schedulers()),
                         starcnn::testing::scheduler_test_name);

}  // namespace
}  // namespace starcnn
