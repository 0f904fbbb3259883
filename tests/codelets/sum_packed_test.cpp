// The packed sum of several groups of vectors (a sample split's CPU gradients, the weights' host
// copy) against a float64 sum written in the test.
#include "codelets/sum_packed.h"

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

class SumPackedTest : public testing::CpuSchedulerTest {};

// Groups of lengths 1 to 50000, each of `per_group` vectors (1: a copy; 11: more buffers in all
// than StarPU's static 8); each group's slice against its float64 sum, the vectors unchanged.
TEST_P(SumPackedTest, EachGroupSumsIntoItsSlice) {
  const size_t lengths[] = {1, 450, 6, 50000, 2400, 7};
  uint32_t seed = 3;
  for (size_t per_group : {1, 4, 11}) {
    SCOPED_TRACE(std::to_string(per_group) + " vectors a group");
    std::vector<std::vector<std::vector<float>>> values;
    std::vector<std::unique_ptr<RegisteredVector>> held;
    std::vector<std::vector<starpu_data_handle_t>> groups;
    std::vector<double> want;
    for (size_t n : lengths) {
      values.emplace_back();
      groups.emplace_back();
      std::vector<double> sum(n, 0.0);
      for (size_t s = 0; s < per_group; ++s) {
        values.back().push_back(testing::random_floats(n, seed++));
        held.push_back(std::make_unique<RegisteredVector>(values.back().back()));
        groups.back().push_back(held.back()->handle());
        for (size_t i = 0; i < n; ++i) sum[i] += double(values.back().back()[i]);
      }
      want.insert(want.end(), sum.begin(), sum.end());
    }
    RegisteredVector packed(testing::random_floats(want.size(), seed++));  // overwritten
    submit_sum_packed(groups, packed.handle());
    testing::expect_close(packed.read(), want, 1e-6 * double(per_group + 1));
    for (size_t g = 0; g < values.size(); ++g)
      for (size_t s = 0; s < per_group; ++s)
        EXPECT_EQ(held[g * per_group + s]->read(), values[g][s])
            << "group " << g << " vector " << s;
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 3);
}

TEST_P(SumPackedTest, MismatchedGroupsOrLengthsAreRefused) {
  RegisteredVector a(5), b(5), c(4), packed(10), wrong(9);
  EXPECT_THROW(submit_sum_packed({}, packed.handle()), std::invalid_argument);
  EXPECT_THROW(submit_sum_packed({{a.handle(), b.handle()}, {a.handle()}}, packed.handle()),
               std::invalid_argument);
  EXPECT_THROW(submit_sum_packed({{a.handle(), c.handle()}}, packed.handle()),
               std::invalid_argument);
  EXPECT_THROW(submit_sum_packed({{a.handle()}, {b.handle()}}, wrong.handle()),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SumPackedTest);

}  // namespace
}  // namespace starcnn
