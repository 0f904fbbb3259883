// ReLU on CUDA workers against the CPU implementation; skips where StarPU finds no CUDA worker.
#include "codelets/relu.h"

#include <gtest/gtest.h>

#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

class ReluCudaTest : public testing::CudaSchedulerTest {};

const size_t kSizes[] = {1, 7, 1000, 65537, 1 << 22};

TEST_P(ReluCudaTest, ForwardAndBackwardOnCudaMatchCpu) {
  for (size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto x = testing::random_floats(n, uint32_t(n) + 3);
    const auto dy = testing::random_floats(n, uint32_t(n) + 4);
    std::vector<float> y_cpu(n), dx_cpu(n);
    relu_forward_cpu(x.data(), y_cpu.data(), n);
    relu_backward_cpu(y_cpu.data(), dy.data(), dx_cpu.data(), n);

    RegisteredVector xh(x), yh(n, -7.0f), dyh(dy), dxh(n, -7.0f);
    submit_relu_forward(xh.handle(), yh.handle(), Where::cuda);
    submit_relu_backward(yh.handle(), dyh.handle(), dxh.handle(), Where::cuda);
    EXPECT_EQ(yh.read(), y_cpu);
    EXPECT_EQ(dxh.read(), dx_cpu);
  }
  // The work was done by CUDA workers, not by CPU workers.
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, 2 * int(std::size(kSizes)));
  EXPECT_EQ(counts.cpu_tasks, 0);
  std::printf("[ relu ] %s: %d tasks on CUDA workers, %d on CPU workers\n", GetParam().c_str(),
              counts.cuda_tasks, counts.cpu_tasks);
}

// With both kinds allowed, many independent tasks land on whichever workers the scheduler picks
// and every result is still right.
TEST_P(ReluCudaTest, MixedWorkersGiveTheSameResult) {
  const size_t n = 1 << 16;
  const int ntasks = 64;
  std::vector<std::unique_ptr<RegisteredVector>> xs, ys;
  std::vector<std::vector<float>> inputs;
  for (int t = 0; t < ntasks; ++t) {
    inputs.push_back(testing::random_floats(n, uint32_t(100 + t)));
    xs.push_back(std::make_unique<RegisteredVector>(inputs.back()));
    ys.push_back(std::make_unique<RegisteredVector>(n, -7.0f));
    submit_relu_forward(xs.back()->handle(), ys.back()->handle());
  }
  for (int t = 0; t < ntasks; ++t) {
    std::vector<float> want(n);
    relu_forward_cpu(inputs[t].data(), want.data(), n);
    ASSERT_EQ(ys[t]->read(), want) << "task " << t;
  }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks + counts.cpu_tasks, ntasks);
  std::printf("[ relu ] %s mixed: %d tasks on CUDA workers, %d on CPU workers\n",
              GetParam().c_str(), counts.cuda_tasks, counts.cpu_tasks);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(ReluCudaTest);

}  // namespace
}  // namespace starcnn
