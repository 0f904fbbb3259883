// Softmax cross-entropy codelets on CPU workers against a float64 reference, under each test
// scheduler.
#include "codelets/softmax_xent.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "tests/support/comparisons.h"
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

struct Batch {
  SoftmaxXentShape shape;
  std::vector<float> z;
  std::vector<int32_t> labels;
};

size_t first_argmax(const double *row, size_t classes) {
  size_t best = 0;
  for (size_t j = 1; j < classes; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

// Random logits; every other row's label is its argmax, so correct counts are far from zero.
Batch random_batch(SoftmaxXentShape shape, uint32_t seed) {
  Batch b{shape, testing::random_floats(size_t(shape.n) * shape.classes, seed, -4.0f, 4.0f), {}};
  std::mt19937 gen(seed + 1);
  for (uint32_t i = 0; i < shape.n; ++i) {
    const std::vector<double> row(b.z.begin() + i * shape.classes,
                                  b.z.begin() + (i + 1) * shape.classes);
    b.labels.push_back(i % 2 ? int32_t(gen() % shape.classes)
                             : int32_t(first_argmax(row.data(), shape.classes)));
  }
  return b;
}

struct Loss {
  double sum = 0.0;
  int correct = 0;
};

// -log(exp(z[label]) / sum exp(z)), computed in double through log-sum-exp.
Loss reference_loss(const std::vector<double> &z, const std::vector<int32_t> &labels,
                    size_t classes) {
  Loss loss;
  for (size_t i = 0; i < labels.size(); ++i) {
    const double *row = z.data() + i * classes;
    const double max = row[first_argmax(row, classes)];
    double sum = 0.0;
    for (size_t j = 0; j < classes; ++j) sum += std::exp(row[j] - max);
    loss.sum += std::log(sum) + max - row[labels[i]];
    loss.correct += first_argmax(row, classes) == size_t(labels[i]);
  }
  return loss;
}

std::vector<double> to_double(const std::vector<float> &v) {
  return {v.begin(), v.end()};
}

// d(mean loss)/dZ over a batch of batch_size rows.
std::vector<double> reference_gradient(const Batch &b, size_t batch_size) {
  const size_t classes = b.shape.classes;
  std::vector<double> dz(b.z.size());
  for (size_t i = 0; i < b.labels.size(); ++i) {
    double max = b.z[i * classes], sum = 0.0;
    for (size_t j = 0; j < classes; ++j) max = std::max(max, double(b.z[i * classes + j]));
    for (size_t j = 0; j < classes; ++j) sum += std::exp(b.z[i * classes + j] - max);
    for (size_t j = 0; j < classes; ++j)
      dz[i * classes + j] =
          (std::exp(b.z[i * classes + j] - max) / sum - (size_t(b.labels[i]) == j ? 1.0 : 0.0)) /
          double(batch_size);
  }
  return dz;
}

// A stats vector {loss sum, correct count} that starts at zero and takes REDUX contributions.
struct Stats : RegisteredVector {
  explicit Stats(std::vector<float> start = {0.0f, 0.0f}) : RegisteredVector(start) {
    set_sum_reduction(handle());
  }
};

// n, classes: batch 1, a single class, odd sizes, MNIST-like, many classes.
const SoftmaxXentShape kShapes[] = {{1, 1}, {1, 10}, {7, 3}, {64, 10}, {33, 37}, {5, 1000}};

std::string describe(const SoftmaxXentShape &s) {
  return "n=" + std::to_string(s.n) + " classes=" + std::to_string(s.classes);
}

class SoftmaxXentTest : public testing::CpuSchedulerTest {};

TEST_P(SoftmaxXentTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (const SoftmaxXentShape &s : kShapes) {
    SCOPED_TRACE(describe(s));
    const Batch b = random_batch(s, seed += 10);
    RegisteredVector zh(b.z);
    RegisteredIntVector lh(b.labels);
    Stats stats;
    submit_softmax_xent_forward(zh.handle(), lh.handle(), stats.handle(), s);
    const auto got = stats.read();
    const Loss want = reference_loss(to_double(b.z), b.labels, s.classes);
    EXPECT_NEAR(got[0], want.sum, 1e-5 * (1.0 + want.sum));
    EXPECT_EQ(got[1], float(want.correct));
  }
  EXPECT_GE(testing::count_tasks().cpu_tasks, int(std::size(kShapes)));
}

// PyTorch: nn.CrossEntropyLoss()(tensor([[1., 2., 3.]]), tensor([2])) == 0.4076059644.
// Ties in the prediction go to the first maximum, as torch.argmax.
TEST_P(SoftmaxXentTest, KnownValueAndTies) {
  RegisteredVector zh({1.0f, 2.0f, 3.0f, 1.0f, 3.0f, 3.0f, 2.0f, 5.0f, 5.0f});
  RegisteredIntVector lh({2, 2, 1});  // right; wrong (the tie goes to 1); right
  Stats first, all;
  submit_softmax_xent_forward(zh.handle(), lh.handle(), first.handle(), {1, 3});
  submit_softmax_xent_forward(zh.handle(), lh.handle(), all.handle(), {3, 3});
  EXPECT_NEAR(first.read()[0], 0.4076059644, 1e-6);
  EXPECT_EQ(all.read()[1], 2.0f);
}

// The backward task, and the training step's fused task (the forward's stats and the backward's
// dZ, here for a sub-batch of a batch twice its size).
TEST_P(SoftmaxXentTest, BackwardAndTrainTaskMatchReference) {
  uint32_t seed = 2;
  for (const SoftmaxXentShape &s : kShapes) {
    SCOPED_TRACE(describe(s));
    const Batch b = random_batch(s, seed += 10);
    RegisteredVector zh(b.z), dzh(b.z.size(), -7.0f), train_dzh(b.z.size(), -7.0f);
    RegisteredIntVector lh(b.labels);
    submit_softmax_xent_backward(zh.handle(), lh.handle(), dzh.handle(), s, s.n);
    testing::expect_near(dzh.read(), reference_gradient(b, s.n), 1e-6);
    Stats stats;
    submit_softmax_xent_train(zh.handle(), lh.handle(), stats.handle(), train_dzh.handle(), s,
                              2 * s.n);
    const auto got = stats.read();
    const Loss want = reference_loss(to_double(b.z), b.labels, s.classes);
    EXPECT_NEAR(got[0], want.sum, 1e-5 * (1.0 + want.sum));
    EXPECT_EQ(got[1], float(want.correct));
    testing::expect_near(train_dzh.read(), reference_gradient(b, 2 * s.n), 1e-6);
  }
}

// dZ is the gradient of the mean loss: compare with central differences in double.
TEST_P(SoftmaxXentTest, BackwardMatchesFiniteDifferences) {
  const Batch b = random_batch({6, 9}, 77);
  RegisteredVector zh(b.z), dzh(b.z.size(), -7.0f);
  RegisteredIntVector lh(b.labels);
  submit_softmax_xent_backward(zh.handle(), lh.handle(), dzh.handle(), b.shape, b.shape.n);
  const auto dz = dzh.read();
  const double eps = 1e-5;
  for (size_t k = 0; k < b.z.size(); ++k) {
    std::vector<double> plus = to_double(b.z), minus = to_double(b.z);
    plus[k] += eps;
    minus[k] -= eps;
    const double numeric = (reference_loss(plus, b.labels, b.shape.classes).sum -
                            reference_loss(minus, b.labels, b.shape.classes).sum) /
                           (2 * eps * b.shape.n);
    ASSERT_NEAR(dz[k], numeric, 1e-6) << "at element " << k;
  }
}

// A batch cut into uneven sub-batches: their forward tasks reduce into one stats vector, which
// holds the whole batch's loss sum and correct count; their gradients are the whole batch's.
TEST_P(SoftmaxXentTest, SubBatchesGiveTheWholeBatch) {
  const SoftmaxXentShape whole{13, 11};
  const uint32_t samples[] = {1, 7, 5};
  const Batch b = random_batch(whole, 5);
  RegisteredVector zh(b.z), dzh(b.z.size(), -7.0f), dz_whole(b.z.size(), -7.0f);
  RegisteredIntVector lh(b.labels);
  Stats stats;
  submit_softmax_xent_backward(zh.handle(), lh.handle(), dz_whole.handle(), whole, whole.n);

  uint32_t z_lengths[3];
  for (int part = 0; part < 3; ++part) z_lengths[part] = samples[part] * whole.classes;
  starpu_data_filter z_filter{}, label_filter{};
  z_filter.filter_func = label_filter.filter_func = starpu_vector_filter_list;
  z_filter.nchildren = label_filter.nchildren = 3;
  z_filter.filter_arg_ptr = z_lengths;
  label_filter.filter_arg_ptr = const_cast<uint32_t *>(samples);
  starpu_data_partition(zh.handle(), &z_filter);
  starpu_data_partition(dzh.handle(), &z_filter);
  starpu_data_partition(lh.handle(), &label_filter);
  for (unsigned part = 0; part < 3; ++part) {
    const SoftmaxXentShape s{samples[part], whole.classes};
    auto sub = [part](starpu_data_handle_t h) { return starpu_data_get_sub_data(h, 1, part); };
    submit_softmax_xent_forward(sub(zh.handle()), sub(lh.handle()), stats.handle(), s);
    submit_softmax_xent_backward(sub(zh.handle()), sub(lh.handle()), sub(dzh.handle()), s, whole.n);
  }
  for (starpu_data_handle_t h : {zh.handle(), dzh.handle(), lh.handle()})
    starpu_data_unpartition(h, STARPU_MAIN_RAM);

  const Loss want = reference_loss(to_double(b.z), b.labels, whole.classes);
  const auto got = stats.read();
  EXPECT_NEAR(double(got[0]) / whole.n, want.sum / whole.n, 1e-6);  // the batch's mean loss
  EXPECT_EQ(got[1], float(want.correct));
  EXPECT_EQ(dzh.read(), dz_whole.read());
  testing::expect_near(dzh.read(), reference_gradient(b, whole.n), 1e-6);
}

// Stats add up over steps until zeroed; the reduction adds onto what the vector held.
TEST_P(SoftmaxXentTest, StatsAccumulateUntilZeroed) {
  const Batch b = random_batch({9, 4}, 9);
  const Loss one = reference_loss(to_double(b.z), b.labels, 4);
  RegisteredVector zh(b.z);
  RegisteredIntVector lh(b.labels);
  Stats stats({100.0f, 3.0f});
  for (int step = 0; step < 3; ++step)
    submit_softmax_xent_forward(zh.handle(), lh.handle(), stats.handle(), b.shape);
  auto got = stats.read();
  EXPECT_NEAR(got[0], 100.0 + 3 * one.sum, 1e-4);
  EXPECT_EQ(got[1], float(3 + 3 * one.correct));
  submit_zero_fill(stats.handle());
  submit_softmax_xent_forward(zh.handle(), lh.handle(), stats.handle(), b.shape);
  got = stats.read();
  EXPECT_NEAR(got[0], one.sum, 1e-5);
  EXPECT_EQ(got[1], float(one.correct));
}

// A label outside [0, classes) turns the loss and its row of gradients into NaN.
TEST_P(SoftmaxXentTest, BadLabelGivesNan) {
  RegisteredVector zh({0.5f, 1.0f, 2.0f, 0.0f}), dzh(4, -7.0f);
  RegisteredIntVector lh(std::vector<int32_t>{1, 2});
  Stats stats;
  submit_softmax_xent_forward(zh.handle(), lh.handle(), stats.handle(), {2, 2});
  submit_softmax_xent_backward(zh.handle(), lh.handle(), dzh.handle(), {2, 2}, 2);
  EXPECT_TRUE(std::isnan(stats.read()[0]));
  const auto dz = dzh.read();
  EXPECT_FALSE(std::isnan(dz[0]) || std::isnan(dz[1]));
  EXPECT_TRUE(std::isnan(dz[2]) && std::isnan(dz[3]));
}

TEST_P(SoftmaxXentTest, CudaOnlyTaskWithoutCudaWorkerIsRefused) {
  STARCNN_SKIP_WHERE_A_GPU_EXISTS();
  RegisteredVector zh(4), dzh(4);
  RegisteredIntVector lh(2);
  EXPECT_THROW(
      submit_softmax_xent_backward(zh.handle(), lh.handle(), dzh.handle(), {2, 2}, 2, Where::cuda),
      std::runtime_error);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SoftmaxXentTest);

}  // namespace
}  // namespace starcnn
