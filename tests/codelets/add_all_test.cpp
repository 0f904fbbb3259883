// The one-task sum of several vectors into one (the gradient slots of a step's micro-batches),
// against a float64 sum written in the test.
#include "codelets/accumulate.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "tests/support/comparisons.h"
#include "tests/support/random_data.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scheduler_fixture.h"
#include "tests/support/starpu_runtime.h"
#include "tests/support/worker_counts.h"

namespace starcnn {
namespace {

using testing::RegisteredVector;

// dst + sum(srcs) in float64.
std::vector<double> reference_sum(const std::vector<float> &dst,
                                  const std::vector<std::vector<float>> &srcs) {
  std::vector<double> sum(dst.begin(), dst.end());
  for (const auto &src : srcs)
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += double(src[i]);
  return sum;
}

class AddAllTest : public testing::CpuSchedulerTest {};

// Lengths around the kernel's cache block (4096), and more sources (11) than StarPU's 8 static
// buffers.
TEST_P(AddAllTest, SumsEverySourceIntoTheDestination) {
  uint32_t seed = 1;
  int tasks = 0;
  for (size_t n : {size_t(1), size_t(4095), size_t(4097), size_t(50000)})
    for (size_t count : {1, 3, 11}) {
      SCOPED_TRACE("n=" + std::to_string(n) + ", " + std::to_string(count) + " sources");
      const std::vector<float> dst = testing::random_floats(n, seed++);
      std::vector<std::vector<float>> srcs;
      std::vector<std::unique_ptr<RegisteredVector>> src_h;
      std::vector<starpu_data_handle_t> handles;
      for (size_t s = 0; s < count; ++s) {
        srcs.push_back(testing::random_floats(n, seed++));
        src_h.push_back(std::make_unique<RegisteredVector>(srcs.back()));
        handles.push_back(src_h.back()->handle());
      }
      RegisteredVector dst_h(dst);
      submit_add_all(dst_h.handle(), handles, Where::cpu);
      ++tasks;
      // float additions in turn against the float64 sum: within count roundings of |values| < 12.
      testing::expect_close(dst_h.read(), reference_sum(dst, srcs), 1e-6 * double(count + 1));
      for (size_t s = 0; s < count; ++s) EXPECT_EQ(src_h[s]->read(), srcs[s]) << "source " << s;
    }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, tasks);
}

TEST_P(AddAllTest, NoSourcesOrADifferentLengthIsRefused) {
  RegisteredVector dst(5), shorter(4), same(5);
  EXPECT_THROW(submit_add_all(dst.handle(), {}), std::invalid_argument);
  EXPECT_THROW(submit_add_all(dst.handle(), {same.handle(), shorter.handle()}),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(AddAllTest);

}  // namespace
}  // namespace starcnn
