// The multi-vector SGD update on CUDA workers against the CPU implementation; skips where StarPU
// finds no CUDA worker.
#include "codelets/sgd.h"
#include "codelets/sum_packed.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

// Both kernels do the same float operations in the same order, so they should agree to the bit;
// 1e-6 relative leaves room for a compiler fusing the CPU's multiply-adds.
constexpr double kRelativeTolerance = 1e-6;

class SgdCudaTest : public testing::CudaSchedulerTest {};

// One task a step over vectors of many sizes, more of them than one launch takes (so the task
// launches its kernel more than once), against the CPU kernel on the same data.
TEST_P(SgdCudaTest, StepsOnCudaMatchCpu) {
  const SgdParams settings[] = {
      {0.1f, 0.0f, 0.0f, 0}, {0.05f, 0.9f, 0.0f, 0}, {0.01f, 0.9f, 5e-4f, 0}};
  std::vector<size_t> sizes = {1, 1001, 1 << 20, 300000};
  for (size_t v = 0; sizes.size() < kMaxSgdVectorsPerLaunch + 5; ++v) sizes.push_back(1 + 97 * v);
  const int steps = 4;
  uint32_t seed = 1;
  int tasks = 0;
  for (const SgdParams &setting : settings) {
    SCOPED_TRACE("momentum=" + std::to_string(setting.momentum));
    const bool momentum = setting.momentum != 0.0f;
    std::vector<std::vector<float>> w, buf;
    std::vector<std::unique_ptr<RegisteredVector>> wh, bufh, grads;
    for (size_t n : sizes) {
      w.push_back(testing::random_floats(n, seed++));
      buf.emplace_back(n, -7.0f);
      wh.push_back(std::make_unique<RegisteredVector>(w.back()));
      bufh.push_back(std::make_unique<RegisteredVector>(n, -7.0f));
    }
    for (int t = 0; t < steps; ++t) {
      SgdParams params = setting;
      params.first_step = t == 0;
      std::vector<SgdHandles> handles;
      for (size_t v = 0; v < sizes.size(); ++v) {
        const auto g = testing::random_floats(sizes[v], seed++);
        grads.push_back(std::make_unique<RegisteredVector>(g));
        handles.push_back(
            {wh[v]->handle(), grads.back()->handle(), momentum ? bufh[v]->handle() : nullptr});
        sgd_update_cpu(w[v].data(), g.data(), buf[v].data(), sizes[v], params);
      }
      submit_sgd_update(handles, params, Where::cuda);
      ++tasks;
    }
    for (size_t v = 0; v < sizes.size(); ++v) {
      SCOPED_TRACE("n=" + std::to_string(sizes[v]));
      testing::expect_close(wh[v]->read(), w[v], kRelativeTolerance);
      if (momentum) testing::expect_close(bufh[v]->read(), buf[v], kRelativeTolerance);
    }
  }
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, tasks);
  EXPECT_EQ(counts.cpu_tasks, 0);
  std::printf("[ sgd ] %s: %d tasks on CUDA workers, %d on CPU workers\n", GetParam().c_str(),
              counts.cuda_tasks, counts.cpu_tasks);
}

// The sample split's update: packed extra gradients added in and the weights copied out packed,
// over more vectors than one launch takes, against the CPU kernel doing the same.
TEST_P(SgdCudaTest, PackedExtraGradientsAndCopyMatchCpu) {
  std::vector<size_t> sizes = {1, 1001, 70000};
  for (size_t v = 0; sizes.size() < kMaxSgdVectorsPerLaunch + 3; ++v) sizes.push_back(1 + 31 * v);
  size_t total = 0;
  for (size_t n : sizes) total += n;
  const SgdParams params{0.02f, 0.9f, 5e-4f, 1};
  uint32_t seed = 90;
  const std::vector<float> extra = testing::random_floats(total, seed++);
  std::vector<float> copy(total, -3.0f);
  RegisteredVector extra_h(extra), copy_h(copy);
  std::vector<std::vector<float>> w, buf;
  std::vector<std::unique_ptr<RegisteredVector>> held;
  std::vector<SgdHandles> handles;
  size_t offset = 0;
  for (size_t n : sizes) {
    w.push_back(testing::random_floats(n, seed++));
    buf.emplace_back(n, 0.0f);
    const auto g = testing::random_floats(n, seed++);
    held.push_back(std::make_unique<RegisteredVector>(w.back()));
    held.push_back(std::make_unique<RegisteredVector>(g));
    held.push_back(std::make_unique<RegisteredVector>(buf.back()));
    handles.push_back(
        {held[held.size() - 3]->handle(), held[held.size() - 2]->handle(), held.back()->handle()});
    sgd_update_cpu(w.back().data(), g.data(), buf.back().data(), n, params, extra.data() + offset,
                   copy.data() + offset);
    offset += n;
  }
  submit_sgd_update(handles, params, Where::cuda, 0, {extra_h.handle(), copy_h.handle()});
  testing::expect_close(copy_h.read(), copy, kRelativeTolerance);
  for (size_t v = 0; v < sizes.size(); ++v) {
    SCOPED_TRACE("n=" + std::to_string(sizes[v]));
    testing::expect_close(held[3 * v]->read(), w[v], kRelativeTolerance);
  }
  EXPECT_EQ(testing::count_tasks().cuda_tasks, 1);
}

// A sample split's update on both sides (ParameterSet::use_host_mirror): the CUDA worker updates
// each vector and packs its gradients (sum_packed on CUDA), a CPU worker applies the same update
// to a packed copy of the weights and momenta from those packed gradients. Over several steps
// the two stay equal to the bit, or the CPU networks would drift from the GPU's weights.
TEST_P(SgdCudaTest, BothSidesUpdateToTheSameBits) {
  if (starpu_cpu_worker_get_count() == 0) GTEST_SKIP() << "no CPU worker";
  const std::vector<size_t> sizes = {150, 6, 2400, 16, 30720, 120, 10080, 84, 850, 10};
  size_t total = 0;
  for (size_t n : sizes) total += n;
  uint32_t seed = 300;
  std::vector<std::unique_ptr<RegisteredVector>> w, buf;
  std::vector<float> packed_w;
  for (size_t n : sizes) {
    const auto values = testing::random_floats(n, seed++);
    packed_w.insert(packed_w.end(), values.begin(), values.end());
    w.push_back(std::make_unique<RegisteredVector>(values));
    buf.push_back(std::make_unique<RegisteredVector>(n));
  }
  RegisteredVector host_w(packed_w), host_buf(total), device_grads(total);
  std::vector<std::unique_ptr<RegisteredVector>> step_grads;
  for (int step = 0; step < 4; ++step) {
    std::vector<SgdHandles> handles;
    std::vector<std::vector<starpu_data_handle_t>> own;
    for (size_t v = 0; v < sizes.size(); ++v) {
      step_grads.push_back(
          std::make_unique<RegisteredVector>(testing::random_floats(sizes[v], seed++)));
      handles.push_back({w[v]->handle(), step_grads.back()->handle(), buf[v]->handle()});
      own.push_back({step_grads.back()->handle()});
    }
    step_grads.push_back(std::make_unique<RegisteredVector>(testing::random_floats(total, seed++)));
    const starpu_data_handle_t host_grads = step_grads.back()->handle();  // the CPU chains' sum
    const SgdParams params{0.05f - 0.01f * float(step), 0.9f, 5e-4f, step == 0};
    submit_sum_packed(own, device_grads.handle(), Where::cuda);
    submit_sgd_update(handles, params, Where::cuda, 0, {host_grads, nullptr});
    submit_sgd_update({{host_w.handle(), device_grads.handle(), host_buf.handle()}}, params,
                      Where::cpu, 0, {host_grads, nullptr});
  }
  const std::vector<float> cpu_w = host_w.read(), cpu_buf = host_buf.read();
  size_t offset = 0, differing = 0;
  for (size_t v = 0; v < sizes.size(); ++v) {
    const std::vector<float> gpu_w = w[v]->read(), gpu_buf = buf[v]->read();
    differing += testing::count_bit_differences(gpu_w.data(), cpu_w.data() + offset, sizes[v]);
    differing += testing::count_bit_differences(gpu_buf.data(), cpu_buf.data() + offset, sizes[v]);
    offset += sizes[v];
  }
  EXPECT_EQ(differing, 0u) << "of " << 2 * total << " weights and momenta";
  const testing::WorkerCounts counts = testing::count_tasks();
  EXPECT_EQ(counts.cuda_tasks, 8);
  EXPECT_EQ(counts.cpu_tasks, 4);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SgdCudaTest);

}  // namespace
}  // namespace starcnn
