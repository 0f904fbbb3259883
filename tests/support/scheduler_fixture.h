// Fixtures of the codelet suites: each test case starts StarPU under one scheduler of
// test_schedulers() (the test's parameter) and stops it afterwards. Derive a named fixture per
// suite (class ReluTest : public testing::CpuSchedulerTest {};) and instantiate it with
// STARCNN_INSTANTIATE_SCHEDULER_TESTS(ReluTest).
#pragma once

#include <gtest/gtest.h>
#include <starpu.h>

#include <memory>
#include <string>

#include "codelets/support/codelet_runtime.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn::testing {

// CPU workers only (no CUDA device is taken even where one exists); task counting starts at zero.
class CpuSchedulerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    runtime_ = std::make_unique<StarpuRuntime>(GetParam(), 0);
    ASSERT_EQ(runtime_->policy_name(), GetParam());
    start_counting_tasks();
  }
  void TearDown() override { runtime_.reset(); }
  std::unique_ptr<StarpuRuntime> runtime_;
};

// Every CUDA device and the CPU workers; skips the test where StarPU finds no CUDA worker.
// Task counting starts at zero.
class CudaSchedulerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    runtime_ = std::make_unique<StarpuRuntime>(GetParam());
    if (starpu_cuda_worker_get_count() == 0) GTEST_SKIP() << "no CUDA worker: no GPU here";
    start_counting_tasks();
  }
  void TearDown() override { runtime_.reset(); }
  std::unique_ptr<StarpuRuntime> runtime_;
};

// For tests of a CUDA-only task refused without CUDA workers. On the H200, StarPU 1.3.10 started
// with conf.ncuda = 0 accepted such a task (it then never ran and the suite hung), so the refusal
// is checked only on machines without a GPU.
#define STARCNN_SKIP_WHERE_A_GPU_EXISTS()                                           \
  if (::starcnn::cuda_devices_for_starpu() > 0)                                     \
  GTEST_SKIP() << "a GPU exists: StarPU may accept a CUDA-only task with its CUDA " \
                  "workers disabled"

}  // namespace starcnn::testing

// Runs every TEST_P of `fixture` once per scheduler, the cases named after the scheduler.
#define STARCNN_INSTANTIATE_SCHEDULER_TESTS(fixture)                                   \
  INSTANTIATE_TEST_SUITE_P(Schedulers, fixture,                                        \
                           ::testing::ValuesIn(::starcnn::testing::test_schedulers()), \
                           ::starcnn::testing::scheduler_test_name)
