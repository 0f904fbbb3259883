// ReLU codelets on CPU workers against a float64 reference, under each test scheduler.
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

std::vector<double> reference_relu(const std::vector<float> &x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0.0 ? double(x[i]) : 0.0;
  return y;
}

std::vector<double> reference_relu_backward(const std::vector<float> &x,
                                            const std::vector<float> &dy) {
  std::vector<double> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) dx[i] = x[i] > 0.0 ? double(dy[i]) : 0.0;
  return dx;
}

void expect_equal(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(double(got[i]), want[i]) << "at element " << i;
}

class ReluTest : public testing::CpuSchedulerTest {};

const size_t kSizes[] = {1, 7, 1000, 65537, 1 << 20};

TEST_P(ReluTest, ForwardMatchesReference) {
  for (size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto x = testing::random_floats(n, uint32_t(n));
    RegisteredVector xh(x), yh(n, -7.0f);  // poisoned: every element must be written
    submit_relu_forward(xh.handle(), yh.handle());
    expect_equal(yh.read(), reference_relu(x));
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, int(std::size(kSizes)));
}

TEST_P(ReluTest, ForwardInPlace) {
  const auto x = testing::random_floats(4099, 11);
  RegisteredVector xh(x);
  submit_relu_forward(xh.handle(), xh.handle());
  expect_equal(xh.read(), reference_relu(x));
}

TEST_P(ReluTest, BackwardMatchesReference) {
  for (size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto x = testing::random_floats(n, uint32_t(n) + 1);
    const auto dy = testing::random_floats(n, uint32_t(n) + 2);
    RegisteredVector xh(x), yh(n), dyh(dy), dxh(n, -7.0f);
    submit_relu_forward(xh.handle(), yh.handle());
    submit_relu_backward(yh.handle(), dyh.handle(), dxh.handle());
    expect_equal(dxh.read(), reference_relu_backward(x, dy));
  }
}

// Uneven sub-batches of one vector, each its own task, give the same result as the whole.
TEST_P(ReluTest, SubBatchesCoverTheWhole) {
  const size_t n = 10007;
  const auto x = testing::random_floats(n, 5);
  RegisteredVector xh(x), yh(n, -7.0f);
  uint32_t lengths[] = {1, 5000, 3000, 2006};
  starpu_data_filter filter{};
  filter.filter_func = starpu_vector_filter_list;
  filter.nchildren = 4;
  filter.filter_arg_ptr = lengths;
  starpu_data_partition(xh.handle(), &filter);
  starpu_data_partition(yh.handle(), &filter);
  for (unsigned part = 0; part < 4; ++part)
    submit_relu_forward(starpu_data_get_sub_data(xh.handle(), 1, part),
                        starpu_data_get_sub_data(yh.handle(), 1, part));
  starpu_data_unpartition(xh.handle(), STARPU_MAIN_RAM);
  starpu_data_unpartition(yh.handle(), STARPU_MAIN_RAM);
  expect_equal(yh.read(), reference_relu(x));
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 4);
}

TEST_P(ReluTest, CudaOnlyTaskWithoutCudaWorkerIsRefused) {
  STARCNN_SKIP_WHERE_A_GPU_EXISTS();
  RegisteredVector xh(16), yh(16);
  EXPECT_THROW(submit_relu_forward(xh.handle(), yh.handle(), Where::cuda), std::runtime_error);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(ReluTest);

}  // namespace
}  // namespace starcnn
