// Maxpool on CUDA workers against the CPU implementation; skips where StarPU finds no CUDA worker.
// Pooling only selects and copies values, so CUDA and CPU must agree exactly.
#include "codelets/maxpool.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "tests/support/random_data.h"
#include "tests/support/registered_int_vector.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredIntVector;
using testing::RegisteredVector;

struct CpuResult {
  std::vector<float> p, dx;
  std::vector<int32_t> argmax;
};

CpuResult run_on_cpu(const std::vector<float> &x, const std::vector<float> &dp,
                     const MaxpoolShape &s, bool relu = false) {
  CpuResult r{std::vector<float>(s.out_size()), std::vector<float>(s.in_size()),
              std::vector<int32_t>(s.out_size())};
  maxpool_forward_cpu(x.data(), r.p.data(), r.argmax.data(), s, relu);
  maxpool_backward_cpu(dp.data(), r.argmax.data(), r.dx.data(), s);
  return r;
}

// Values from a few levels, so that many windows hold ties.
std::vector<float> tied_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> v(n);
  for (float &x : v) x = float(int(gen() % 4)) * 0.5f;
  return v;
}

class MaxpoolCudaTest : public testing::CudaSchedulerTest {};

const MaxpoolShape kShapes[] = {{1, 1, 2, 2},  {1, 3, 5, 7},     {3, 4, 9, 8},
                                {2, 5, 13, 3}, {64, 32, 28, 28}, {128, 64, 15, 14}};

TEST_P(MaxpoolCudaTest, ForwardAndBackwardOnCudaMatchCpu) {
  uint32_t seed = 1;
  int submitted = 0;
  for (const MaxpoolShape &s : kShapes) {
    for (bool ties : {false, true}) {
      SCOPED_TRACE("C=" + std::to_string(s.channels) + " H=" + std::to_string(s.height) +
                   " W=" + std::to_string(s.width) + (ties ? " with ties" : ""));
      const auto x =
          ties ? tied_floats(s.in_size(), ++seed) : testing::random_floats(s.in_size(), ++seed);
      const auto dp = testing::random_floats(s.out_size(), ++seed);
      const CpuResult want = run_on_cpu(x, dp, s);

      RegisteredVector xh(x), ph(s.out_size(), -7.0f), dph(dp), dxh(s.in_size(), -7.0f);
      RegisteredIntVector ah(s.out_size(), -7);
      submit_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s, Where::cuda);
      submit_maxpool_backward(dph.handle(), ah.handle(), dxh.handle(), s, Where::cuda);
      submitted += 2;
      EXPECT_EQ(ph.read(), want.p);
      EXPECT_EQ(ah.read(), want.argmax);
      EXPECT_EQ(dxh.read(), want.dx);
    }
  }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, submitted);
  EXPECT_EQ(counts.cpu_tasks, 0);
  std::printf("[ maxpool ] %s: %d tasks on CUDA workers, %d on CPU workers\n", GetParam().c_str(),
              counts.cuda_tasks, counts.cpu_tasks);
}

TEST_P(MaxpoolCudaTest, FusedReluOnCudaMatchesCpu) {
  uint32_t seed = 50;
  for (const MaxpoolShape &s : kShapes) {
    SCOPED_TRACE("C=" + std::to_string(s.channels) + " H=" + std::to_string(s.height) +
                 " W=" + std::to_string(s.width));
    const auto x = testing::random_floats(s.in_size(), ++seed);
    const auto dp = testing::random_floats(s.out_size(), ++seed);
    const CpuResult want = run_on_cpu(x, dp, s, true);
    RegisteredVector xh(x), ph(s.out_size(), -7.0f), dph(dp), dxh(s.in_size(), -7.0f);
    RegisteredIntVector ah(s.out_size(), -7);
    submit_relu_maxpool_forward(xh.handle(), ph.handle(), ah.handle(), s, Where::cuda);
    submit_maxpool_backward(dph.handle(), ah.handle(), dxh.handle(), s, Where::cuda);
    EXPECT_EQ(ph.read(), want.p);
    EXPECT_EQ(ah.read(), want.argmax);
    EXPECT_EQ(dxh.read(), want.dx);
  }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, 2 * int(std::size(kShapes)));
  EXPECT_EQ(counts.cpu_tasks, 0);
}

// Sub-batches alternate between CUDA and CPU workers; the pieces still make the whole.
TEST_P(MaxpoolCudaTest, SubBatchesOnBothKindsOfWorker) {
  const MaxpoolShape whole{6, 8, 11, 10};
  const auto x = testing::random_floats(whole.in_size(), 31);
  const auto dp = testing::random_floats(whole.out_size(), 32);
  const CpuResult want = run_on_cpu(x, dp, whole);
  RegisteredVector xh(x), ph(whole.out_size(), -7.0f), dph(dp), dxh(whole.in_size(), -7.0f);
  RegisteredIntVector ah(whole.out_size(), -7);

  const MaxpoolShape part{2, whole.channels, whole.height, whole.width};
  starpu_data_filter in_filter{}, out_filter{};
  in_filter.filter_func = out_filter.filter_func = starpu_vector_filter_block;
  in_filter.nchildren = out_filter.nchildren = 3;
  for (starpu_data_handle_t h : {xh.handle(), dxh.handle()}) starpu_data_partition(h, &in_filter);
  for (starpu_data_handle_t h : {ph.handle(), dph.handle(), ah.handle()})
    starpu_data_partition(h, &out_filter);
  for (unsigned k = 0; k < 3; ++k) {
    const Where where = k % 2 ? Where::cpu : Where::cuda;
    auto sub = [k](starpu_data_handle_t h) { return starpu_data_get_sub_data(h, 1, k); };
    submit_maxpool_forward(sub(xh.handle()), sub(ph.handle()), sub(ah.handle()), part, where);
    submit_maxpool_backward(sub(dph.handle()), sub(ah.handle()), sub(dxh.handle()), part, where);
  }
  for (starpu_data_handle_t h : {xh.handle(), dxh.handle(), ph.handle(), dph.handle(), ah.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
  EXPECT_EQ(ph.read(), want.p);
  EXPECT_EQ(ah.read(), want.argmax);
  EXPECT_EQ(dxh.read(), want.dx);
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, 4);
  EXPECT_EQ(counts.cpu_tasks, 2);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(MaxpoolCudaTest);

}  // namespace
}  // namespace starcnn
