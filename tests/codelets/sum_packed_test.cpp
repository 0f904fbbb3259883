// The packed sum of several groups of vectors (a sample split's CPU gradients, the weights' host
// copy) against a float64 sum written in the test.
#include "codelets/sum_packed.h"

#include <gtest/gtest.h>

#include <iterator>
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

// The packed vector written as slices, each its own task over the groups it overlaps: slices
// inside one group, across several, and ending on a group's last element, against the float64
// sums of the whole.
TEST_P(SumPackedTest, SlicesSumTheirPartOfThePackedVector) {
  const size_t lengths[] = {7, 3000, 5, 900};
  const size_t per_group = 3;
  uint32_t seed = 11;
  std::vector<std::unique_ptr<RegisteredVector>> held;
  std::vector<std::vector<starpu_data_handle_t>> groups;
  std::vector<size_t> starts;  // where each group starts in the packed vector
  std::vector<double> want;
  for (size_t n : lengths) {
    starts.push_back(want.size());
    groups.emplace_back();
    std::vector<double> sum(n, 0.0);
    for (size_t s = 0; s < per_group; ++s) {
      const std::vector<float> values = testing::random_floats(n, seed++);
      held.push_back(std::make_unique<RegisteredVector>(values));
      groups.back().push_back(held.back()->handle());
      for (size_t i = 0; i < n; ++i) sum[i] += double(values[i]);
    }
    want.insert(want.end(), sum.begin(), sum.end());
  }
  starts.push_back(want.size());
  const size_t cuts[] = {0, 3, 7, 1000, 3007, 3010, 3012, want.size()};
  std::vector<std::unique_ptr<RegisteredVector>> slices;
  for (size_t c = 0; c + 1 < std::size(cuts); ++c) {
    const size_t first = cuts[c], end = cuts[c + 1];
    std::vector<std::vector<starpu_data_handle_t>> overlapping;
    size_t g = 0;
    while (starts[g + 1] <= first) ++g;
    const size_t skip = first - starts[g];
    for (; g < groups.size() && starts[g] < end; ++g) overlapping.push_back(groups[g]);
    slices.push_back(
        std::make_unique<RegisteredVector>(testing::random_floats(end - first, seed++)));
    submit_sum_packed_slice(overlapping, slices.back()->handle(), skip);
  }
  for (size_t c = 0; c + 1 < std::size(cuts); ++c) {
    SCOPED_TRACE("slice [" + std::to_string(cuts[c]) + ", " + std::to_string(cuts[c + 1]) + ")");
    testing::expect_close(
        slices[c]->read(),
        std::vector<double>(want.begin() + long(cuts[c]), want.begin() + long(cuts[c + 1])),
        1e-6 * double(per_group + 1));
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, int(std::size(cuts) - 1));
}

TEST_P(SumPackedTest, SlicesOutsideTheirGroupsAreRefused) {
  RegisteredVector a(5), b(5), c(4), slice3(3), slice6(6), slice9(9);
  // Groups {a} (5) and {b} (5): 10 elements.
  const std::vector<std::vector<starpu_data_handle_t>> two{{a.handle()}, {b.handle()}};
  EXPECT_THROW(submit_sum_packed_slice(two, slice3.handle(), 5), std::invalid_argument)
      << "starts past the first group";
  EXPECT_THROW(submit_sum_packed_slice(two, slice3.handle(), 1), std::invalid_argument)
      << "leaves the last group untouched";
  EXPECT_THROW(submit_sum_packed_slice(two, slice9.handle(), 2), std::invalid_argument)
      << "runs past the last group";
  EXPECT_THROW(submit_sum_packed_slice({{a.handle(), c.handle()}}, slice3.handle(), 0),
               std::invalid_argument)
      << "vectors of a group differ in length";
  EXPECT_THROW(submit_sum_packed_slice(two, slice6.handle(), 4, Where::cuda), std::invalid_argument)
      << "a slice off the CPU";
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
  submit_sum_packed_slice(two, slice6.handle(), 4);  // the last of a, all of b
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 1);
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

// Several sets of vectors added into one packed vector in commute mode, in whatever order the
// workers take them: the packed vector ends as its starting values plus every set, against the
// float64 sum; the sources unchanged.
TEST_P(SumPackedTest, AddsInCommuteModeAccumulateEverySet) {
  const size_t lengths[] = {450, 6, 20000, 7};
  uint32_t seed = 21;
  std::vector<double> want;
  for (size_t n : lengths) want.resize(want.size() + n, 0.0);
  const std::vector<float> start = testing::random_floats(want.size(), seed++);
  for (size_t i = 0; i < want.size(); ++i) want[i] = double(start[i]);
  RegisteredVector packed(start);
  const size_t sets = 6;
  std::vector<std::unique_ptr<RegisteredVector>> held;
  std::vector<std::vector<float>> values;
  for (size_t k = 0; k < sets; ++k) {
    std::vector<starpu_data_handle_t> vectors;
    size_t offset = 0;
    for (size_t n : lengths) {
      values.push_back(testing::random_floats(n, seed++));
      held.push_back(std::make_unique<RegisteredVector>(values.back()));
      vectors.push_back(held.back()->handle());
      for (size_t i = 0; i < n; ++i) want[offset + i] += double(values.back()[i]);
      offset += n;
    }
    submit_add_packed(vectors, packed.handle());
  }
  testing::expect_close(packed.read(), want, 1e-6 * double(sets + 1));
  for (size_t v = 0; v < held.size(); ++v) EXPECT_EQ(held[v]->read(), values[v]) << "vector " << v;
  EXPECT_EQ(testing::count_tasks().cpu_tasks, int(sets));
}

TEST_P(SumPackedTest, AddsOfTheWrongLengthOrOffTheCpuAreRefused) {
  RegisteredVector a(5), b(4), packed(9), wrong(8);
  EXPECT_THROW(submit_add_packed({}, packed.handle()), std::invalid_argument);
  EXPECT_THROW(submit_add_packed({a.handle(), b.handle()}, wrong.handle()), std::invalid_argument);
  EXPECT_THROW(submit_add_packed({a.handle(), b.handle()}, packed.handle(), Where::cuda),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SumPackedTest);

}  // namespace
}  // namespace starcnn
