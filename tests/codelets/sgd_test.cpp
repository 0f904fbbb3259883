// The multi-vector SGD update codelet on CPU workers against a float64 version of
// torch.optim.SGD's rule applied to each vector alone, under each test scheduler.
#include "codelets/sgd.h"

#include <gtest/gtest.h>
#include <starpu_scheduler.h>

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

// torch.optim.SGD.step for one parameter, dampening 0, nesterov false, in double.
struct ReferenceSgd {
  double lr, momentum, weight_decay;
  std::vector<double> w, buf;
  bool has_buf = false;

  void step(const std::vector<float> &grad) {
    if (momentum != 0.0 && !has_buf) buf.assign(w.size(), 0.0);
    for (size_t i = 0; i < w.size(); ++i) {
      double d_p = grad[i];
      if (weight_decay != 0.0) d_p += weight_decay * w[i];
      if (momentum != 0.0) {
        buf[i] = has_buf ? momentum * buf[i] + d_p : d_p;
        d_p = buf[i];
      }
      w[i] -= lr * d_p;
    }
    if (momentum != 0.0) has_buf = true;
  }
};

void expect_near(const std::vector<float> &got, const std::vector<double> &want) {
  testing::expect_close(got, want, 1e-5);
}

class SgdTest : public testing::CpuSchedulerTest {};

// {lr, momentum, weight decay}: plain, momentum, weight decay, both.
const SgdParams kSettings[] = {
    {0.1f, 0.0f, 0.0f, 0}, {0.05f, 0.9f, 0.0f, 0}, {0.1f, 0.0f, 0.01f, 0}, {0.01f, 0.9f, 5e-4f, 0}};

std::string describe(const SgdParams &p) {
  return "lr=" + std::to_string(p.lr) + " momentum=" + std::to_string(p.momentum) +
         " wd=" + std::to_string(p.weight_decay);
}

// One vector of a multi-vector update: its StarPU vectors and the float64 reference beside them.
struct UpdatedVector {
  UpdatedVector(const std::vector<float> &w0, const SgdParams &setting)
      : w(w0),
        buf(w0.size(), -7.0f),  // poisoned: the first step must not read it
        want{setting.lr,
             setting.momentum,
             setting.weight_decay,
             std::vector<double>(w0.begin(), w0.end()),
             {}} {}
  RegisteredVector w, buf;
  std::vector<std::unique_ptr<RegisteredVector>> grads;
  ReferenceSgd want;
};

// Vectors of `sizes` with random weights from `seed` on (advanced past them).
template <size_t N>
std::vector<std::unique_ptr<UpdatedVector>> random_vectors(const size_t (&sizes)[N],
                                                           const SgdParams &setting,
                                                           uint32_t &seed) {
  std::vector<std::unique_ptr<UpdatedVector>> vectors;
  for (size_t n : sizes)
    vectors.push_back(std::make_unique<UpdatedVector>(testing::random_floats(n, seed++), setting));
  return vectors;
}

// Several steps of vectors of many sizes (one element to several thousand, more buffers than
// StarPU's fixed task size), one task a step, each with fresh gradients, submitted without
// waiting; each vector against its own float64 reference.
TEST_P(SgdTest, OneTaskUpdatesEveryVectorLikeTorch) {
  const size_t sizes[] = {1, 7, 256, 1001, 4099, 3, 60000};
  const int steps = 5;
  uint32_t seed = 1;
  for (const SgdParams &setting : kSettings) {
    SCOPED_TRACE(describe(setting));
    const bool momentum = setting.momentum != 0.0f;
    std::vector<std::unique_ptr<UpdatedVector>> vectors = random_vectors(sizes, setting, seed);
    for (int t = 0; t < steps; ++t) {
      std::vector<SgdHandles> handles;
      for (auto &v : vectors) {
        v->grads.push_back(
            std::make_unique<RegisteredVector>(testing::random_floats(v->w.size(), seed++)));
        handles.push_back(
            {v->w.handle(), v->grads.back()->handle(), momentum ? v->buf.handle() : nullptr});
      }
      SgdParams params = setting;
      params.first_step = t == 0;
      submit_sgd_update(handles, params);
      for (auto &v : vectors) v->want.step(v->grads.back()->read());
    }
    for (auto &v : vectors) {
      SCOPED_TRACE("n=" + std::to_string(v->w.size()));
      expect_near(v->w.read(), v->want.w);
      if (momentum) expect_near(v->buf.read(), v->want.buf);
    }
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, steps * int(std::size(kSettings)));
}

// The parts of a split parameter, each a vector of its own in one task, give the whole's update.
TEST_P(SgdTest, PartsInOneTaskGiveTheWhole) {
  const size_t n = 777;
  const SgdParams params{0.02f, 0.8f, 1e-3f, 0};
  const auto w0 = testing::random_floats(n, 50);
  const auto g = testing::random_floats(n, 51);
  const auto b0 = testing::random_floats(n, 52);
  ReferenceSgd want{params.lr,
                    params.momentum,
                    params.weight_decay,
                    std::vector<double>(w0.begin(), w0.end()),
                    std::vector<double>(b0.begin(), b0.end()),
                    true};
  want.step(g);

  RegisteredVector w(w0), grad(g), buf(b0);
  uint32_t lengths[] = {1, 500, 276};
  starpu_data_filter filter{};
  filter.filter_func = starpu_vector_filter_list;
  filter.nchildren = 3;
  filter.filter_arg_ptr = lengths;
  for (RegisteredVector *v : {&w, &grad, &buf}) starpu_data_partition(v->handle(), &filter);
  std::vector<SgdHandles> parts;
  for (unsigned p = 0; p < 3; ++p)
    parts.push_back({starpu_data_get_sub_data(w.handle(), 1, p),
                     starpu_data_get_sub_data(grad.handle(), 1, p),
                     starpu_data_get_sub_data(buf.handle(), 1, p)});
  submit_sgd_update(parts, params);
  for (RegisteredVector *v : {&w, &grad, &buf})
    starpu_data_unpartition(v->handle(), STARPU_MAIN_RAM);
  expect_near(w.read(), want.w);
  expect_near(buf.read(), want.buf);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 1);
}

// A sample split's update: each vector's gradient plus its slice of a packed extra gradient,
// and the updated weights copied into a packed vector, over steps with momentum and decay.
TEST_P(SgdTest, PackedExtraGradientsAddInAndWeightsCopyOut) {
  const size_t sizes[] = {5, 1001, 1, 300};
  const SgdParams setting{0.03f, 0.9f, 1e-3f, 0};
  size_t total = 0;
  for (size_t n : sizes) total += n;
  uint32_t seed = 70;
  std::vector<std::unique_ptr<UpdatedVector>> vectors;
  for (size_t n : sizes)
    vectors.push_back(std::make_unique<UpdatedVector>(testing::random_floats(n, seed++), setting));
  RegisteredVector copy(testing::random_floats(total, seed++));  // overwritten every step
  std::vector<std::unique_ptr<RegisteredVector>> extras;
  for (int t = 0; t < 3; ++t) {
    extras.push_back(std::make_unique<RegisteredVector>(testing::random_floats(total, seed++)));
    const std::vector<float> extra = extras.back()->read();
    std::vector<SgdHandles> handles;
    size_t offset = 0;
    for (auto &v : vectors) {
      const size_t n = v->w.size();
      v->grads.push_back(std::make_unique<RegisteredVector>(testing::random_floats(n, seed++)));
      handles.push_back({v->w.handle(), v->grads.back()->handle(), v->buf.handle()});
      std::vector<float> sum = v->grads.back()->read();
      for (size_t i = 0; i < n; ++i) sum[i] += extra[offset + i];  // as the kernel: one float add
      v->want.step(sum);
      offset += n;
    }
    SgdParams params = setting;
    params.first_step = t == 0;
    submit_sgd_update(handles, params, Where::any, 0, {extras.back()->handle(), copy.handle()});
  }
  const std::vector<float> copied = copy.read();
  size_t offset = 0;
  for (auto &v : vectors) {
    SCOPED_TRACE("n=" + std::to_string(v->w.size()));
    const std::vector<float> w = v->w.read();
    expect_near(w, v->want.w);
    expect_near(v->buf.read(), v->want.buf);
    EXPECT_EQ(
        std::vector<float>(copied.begin() + long(offset), copied.begin() + long(offset + w.size())),
        w);
    offset += w.size();
  }
  RegisteredVector short_copy(total - 1);
  std::vector<SgdHandles> one = {
      {vectors[0]->w.handle(), vectors[0]->grads[0]->handle(), vectors[0]->buf.handle()}};
  EXPECT_THROW(submit_sgd_update(one, setting, Where::any, 0, {nullptr, short_copy.handle()}),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 3);
}

// The gradients packed in one vector instead of each vector's own (a sample split's CUDA chain
// writes them so), with and without momentum buffers, the packed extra gradients added and the
// weights copied out as well: every vector against its float64 reference, over two steps.
TEST_P(SgdTest, PackedGradientsReplaceTheVectorsOwn) {
  const size_t sizes[] = {7, 1, 513};
  const size_t total = 7 + 1 + 513;
  uint32_t seed = 90;
  for (const SgdParams &setting : kSettings) {
    SCOPED_TRACE(describe(setting));
    const bool momentum = setting.momentum != 0.0f;
    std::vector<std::unique_ptr<UpdatedVector>> vectors = random_vectors(sizes, setting, seed);
    RegisteredVector copy(total);
    std::vector<std::unique_ptr<RegisteredVector>> held;  // each step's packed vectors
    for (int t = 0; t < 2; ++t) {
      held.push_back(std::make_unique<RegisteredVector>(testing::random_floats(total, seed++)));
      RegisteredVector &grads = *held.back();
      held.push_back(std::make_unique<RegisteredVector>(testing::random_floats(total, seed++)));
      RegisteredVector &extras = *held.back();
      const std::vector<float> g = grads.read(), e = extras.read();
      std::vector<SgdHandles> handles;
      size_t offset = 0;
      for (auto &v : vectors) {
        handles.push_back({v->w.handle(), nullptr, momentum ? v->buf.handle() : nullptr});
        std::vector<float> sum(g.begin() + long(offset), g.begin() + long(offset + v->w.size()));
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += e[offset + i];  // one float add
        v->want.step(sum);
        offset += sum.size();
      }
      SgdParams params = setting;
      params.first_step = t == 0;
      submit_sgd_update(handles, params, Where::any, 0,
                        {extras.handle(), copy.handle(), grads.handle()});
    }
    const std::vector<float> copied = copy.read();
    size_t offset = 0;
    for (auto &v : vectors) {
      const std::vector<float> w = v->w.read();
      expect_near(w, v->want.w);
      if (momentum) expect_near(v->buf.read(), v->want.buf);
      EXPECT_EQ(std::vector<float>(copied.begin() + long(offset),
                                   copied.begin() + long(offset + w.size())),
                w);
      offset += w.size();
    }
  }
  RegisteredVector w(4), short_grads(3);
  EXPECT_THROW(submit_sgd_update({{w.handle(), nullptr, nullptr}}, kSettings[0], Where::any, 0,
                                 {nullptr, nullptr, short_grads.handle()}),
               std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 8);
}

// The footprint of the task that submit_sgd_update would submit for vectors of `sizes`.
uint32_t footprint(const std::vector<size_t> &sizes, SgdParams params) {
  std::vector<std::unique_ptr<RegisteredVector>> held;
  std::vector<starpu_data_descr> descrs;
  const starpu_data_access_mode modes[] = {STARPU_RW, STARPU_R, STARPU_RW};  // w, grad, buffer
  const size_t per_vector = params.momentum != 0.0f ? 3 : 2;
  for (size_t n : sizes)
    for (size_t b = 0; b < per_vector; ++b) {
      held.push_back(std::make_unique<RegisteredVector>(n));
      descrs.push_back({held.back()->handle(), modes[b]});
    }
  const struct {
    SgdParams params;
    uint32_t vectors;
  } args{params, uint32_t(sizes.size())};
  starpu_task *task = starpu_task_build(&sgd_update_codelet, STARPU_DATA_MODE_ARRAY, descrs.data(),
                                        int(descrs.size()), STARPU_VALUE, &args, sizeof(args), 0);
  const uint32_t hash = starpu_task_footprint(sgd_update_codelet.model, task,
                                              starpu_worker_get_perf_archtype(0, 0), 0);
  task->detach = 0;  // never submitted: ours to free
  starpu_task_destroy(task);
  return hash;
}

// The perf model must pool every step of a training run, whatever its learning rate, and tell
// apart lists of other sizes.
TEST_P(SgdTest, PerfModelIgnoresHyperParameters) {
  const uint32_t base = footprint({100, 10}, {0.1f, 0.9f, 0.0f, 1});
  EXPECT_EQ(footprint({100, 10}, {0.001f, 0.5f, 1e-4f, 0}), base);
  EXPECT_NE(footprint({200, 10}, {0.1f, 0.9f, 0.0f, 1}), base);
  EXPECT_NE(footprint({100, 10, 5}, {0.1f, 0.9f, 0.0f, 1}), base);
  EXPECT_NE(footprint({100, 10}, {0.1f, 0.0f, 0.0f, 1}), base) << "no momentum, no buffers";
}

TEST_P(SgdTest, EmptyListsMissingBuffersAndWrongSizesAreRefused) {
  RegisteredVector w(10), g(10), m(10), short_buf(9);
  const SgdParams momentum{0.1f, 0.9f, 0.0f, 1}, plain{0.1f, 0.0f, 0.0f, 1};
  EXPECT_THROW(submit_sgd_update({}, plain), std::invalid_argument);
  EXPECT_THROW(
      submit_sgd_update({{w.handle(), g.handle(), m.handle()}, {m.handle(), g.handle(), nullptr}},
                        momentum),
      std::invalid_argument);
  EXPECT_THROW(submit_sgd_update({{w.handle(), g.handle(), short_buf.handle()}}, momentum),
               std::invalid_argument);
  EXPECT_THROW(
      submit_sgd_update(
          {{w.handle(), g.handle(), nullptr}, {w.handle(), short_buf.handle(), nullptr}}, plain),
      std::invalid_argument);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 0);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SgdTest);

}  // namespace
}  // namespace starcnn
