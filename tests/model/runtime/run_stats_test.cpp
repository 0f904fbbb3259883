// RunStats over tasks of known length: tasks counted per worker kind, only those run between
// begin() and end(), busy and idle fractions in [0, 1] that follow how long the workers were
// left idle, stretches adding up, the JSON holding every field; with a CUDA worker, the bytes
// of a vector read by a CUDA task counted as moved from RAM to the GPU.
#include "model/runtime/run_stats.h"

#include "model/io/json.h"
#include "tests/support/registered_vector.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>
#include <starpu.h>

#include <chrono>
#include <thread>

namespace starcnn {
namespace {

using starcnn::testing::RegisteredVector;
using starcnn::testing::StarpuRuntime;

constexpr auto task_length = std::chrono::milliseconds(4);

void sleep_task(void *[], void *) {
  std::this_thread::sleep_for(task_length);
}

starpu_codelet sleep_codelet() {
  starpu_codelet cl{};
  cl.cpu_funcs[0] = sleep_task;
  cl.cuda_funcs[0] = sleep_task;
  cl.nbuffers = 1;
  cl.modes[0] = STARPU_R;
  cl.name = "run_stats_sleep";
  return cl;
}

void submit_sleeps(starpu_codelet *cl, starpu_data_handle_t data, int count,
                   uint32_t where = STARPU_CPU) {
  for (int i = 0; i < count; ++i)
    ASSERT_EQ(
        starpu_task_insert(cl, STARPU_R, data, STARPU_EXECUTE_WHERE, (unsigned long long)where, 0),
        0);
}

void expect_fraction(double x) {
  EXPECT_GE(x, 0.0);
  EXPECT_LE(x, 1.0);
}

class RunStatsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RunStatsTest, CountsOnlyTheTasksOfTheStretch) {
  StarpuRuntime runtime(GetParam(), 0);
  starpu_codelet cl = sleep_codelet();
  RegisteredVector data(16);
  submit_sleeps(&cl, data.handle(), 5);  // before begin(): not counted
  RunStats stats;
  stats.begin();
  submit_sleeps(&cl, data.handle(), 12);
  stats.end();
  ASSERT_EQ(stats.kinds().count("cpu"), 1u);
  EXPECT_EQ(stats.kinds().count("cuda"), 0u);
  const WorkerKindStats &cpu = stats.kinds().at("cpu");
  EXPECT_EQ(cpu.workers, int(starpu_cpu_worker_get_count()));
  EXPECT_EQ(cpu.tasks, 12u);
  // 12 tasks of 4 ms: at least 48 ms of executing time in all.
  EXPECT_GE(cpu.executing_s, 0.9 * 12 * 0.004);
  EXPECT_GE(cpu.total_s, cpu.executing_s);
  expect_fraction(cpu.busy_fraction());
  expect_fraction(stats.idle_fraction());
  EXPECT_NEAR(stats.idle_fraction(), 1.0 - cpu.busy_fraction(), 1e-12);
  EXPECT_EQ(stats.ram_to_gpu().bytes, 0u);
  EXPECT_EQ(stats.gpu_to_ram().bytes, 0u);
  EXPECT_EQ(stats.gpu_to_gpu().bytes, 0u);
}

TEST_P(RunStatsTest, IdleWorkersShowAsIdleAndStretchesAddUp) {
  StarpuRuntime runtime(GetParam(), 0);
  starpu_codelet cl = sleep_codelet();
  RegisteredVector data(16);
  RunStats stats;
  stats.begin();
  // Every worker idle for 300 ms, then 4 tasks of 4 ms: at most 16 ms busy in 300+ ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  submit_sleeps(&cl, data.handle(), 4);
  stats.end();
  const double workers = double(starpu_cpu_worker_get_count());
  EXPECT_GE(stats.kinds().at("cpu").total_s, 0.3 * workers);
  EXPECT_GT(stats.idle_fraction(), 0.8);
  expect_fraction(stats.idle_fraction());

  submit_sleeps(&cl, data.handle(), 3);  // between stretches: not counted
  starpu_task_wait_for_all();
  stats.begin();
  submit_sleeps(&cl, data.handle(), 6);
  stats.end();
  EXPECT_EQ(stats.kinds().at("cpu").tasks, 10u);
  expect_fraction(stats.idle_fraction());
}

TEST_P(RunStatsTest, JsonHoldsEveryField) {
  StarpuRuntime runtime(GetParam(), 0);
  starpu_codelet cl = sleep_codelet();
  RegisteredVector data(16);
  RunStats stats;
  stats.begin();
  submit_sleeps(&cl, data.handle(), 4);
  stats.end();
  const json::Value v = json::parse(stats.to_json());
  ASSERT_NE(v.find("idle_fraction"), nullptr);
  expect_fraction(json::to_double(*v.find("idle_fraction"), "idle_fraction"));
  const json::Value *cpu = v.find("workers") ? v.find("workers")->find("cpu") : nullptr;
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(json::to_uint(*cpu->find("count"), "count"), starpu_cpu_worker_get_count());
  EXPECT_EQ(json::to_uint(*cpu->find("tasks"), "tasks"), 4u);
  const double busy = json::to_double(*cpu->find("busy_fraction"), "busy");
  const double idle = json::to_double(*cpu->find("idle_fraction"), "idle");
  expect_fraction(busy);
  expect_fraction(idle);
  EXPECT_NEAR(busy + idle, 1.0, 1e-5);
  for (const char *group : {"bytes", "transfers"}) {
    const json::Value *g = v.find(group);
    ASSERT_NE(g, nullptr) << group;
    for (const char *key : {"ram_to_gpu", "gpu_to_ram", "gpu_to_gpu"}) {
      ASSERT_NE(g->find(key), nullptr) << group << "." << key;
      EXPECT_EQ(json::to_uint(*g->find(key), key), 0u) << "no GPU task ran";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, RunStatsTest,
                         ::testing::ValuesIn(starcnn::testing::test_schedulers()),
                         starcnn::testing::scheduler_test_name);

TEST(RunStatsCudaTest, CountsBytesSentToTheGpu) {
  StarpuRuntime runtime("eager");
  if (starpu_cuda_worker_get_count() == 0) GTEST_SKIP() << "no CUDA worker";
  starpu_codelet cl = sleep_codelet();
  RegisteredVector data(1000);
  RunStats stats;
  stats.begin();
  submit_sleeps(&cl, data.handle(), 2, STARPU_CUDA);
  stats.end();
  ASSERT_EQ(stats.kinds().count("cuda"), 1u);
  EXPECT_EQ(stats.kinds().at("cuda").tasks, 2u);
  // Read-only on the GPU: sent once (to each GPU that ran a task), never sent back.
  EXPECT_GE(stats.ram_to_gpu().bytes, 1000 * sizeof(float));
  EXPECT_EQ(stats.ram_to_gpu().bytes % (1000 * sizeof(float)), 0u);
  EXPECT_EQ(stats.gpu_to_ram().bytes, 0u);
  expect_fraction(stats.kinds().at("cuda").busy_fraction());
}

}  // namespace
}  // namespace starcnn
