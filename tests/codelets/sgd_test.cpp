// SGD update codelet on CPU workers against a float64 version of torch.optim.SGD's rule, under
// each test scheduler.
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

// Several steps, each with a fresh gradient, submitted without waiting. The momentum buffer
// starts poisoned: the first step must not read it.
TEST_P(SgdTest, StepsMatchTorchRule) {
  const size_t n = 1001;
  const int steps = 5;
  uint32_t seed = 1;
  for (const SgdParams &setting : kSettings) {
    SCOPED_TRACE(describe(setting));
    const auto w0 = testing::random_floats(n, seed++);
    ReferenceSgd want{setting.lr,
                      setting.momentum,
                      setting.weight_decay,
                      std::vector<double>(w0.begin(), w0.end()),
                      {}};
    RegisteredVector w(w0), buf(n, -7.0f);
    std::vector<std::unique_ptr<RegisteredVector>> grads;
    for (int t = 0; t < steps; ++t) {
      grads.push_back(std::make_unique<RegisteredVector>(testing::random_floats(n, seed++)));
      SgdParams params = setting;
      params.first_step = t == 0;
      submit_sgd_update(w.handle(), grads.back()->handle(),
                        setting.momentum != 0.0f ? buf.handle() : nullptr, params);
      want.step(grads.back()->read());
    }
    expect_near(w.read(), want.w);
    if (setting.momentum != 0.0f) expect_near(buf.read(), want.buf);
  }
  EXPECT_EQ(testing::count_tasks().cpu_tasks, steps * int(std::size(kSettings)));
}

// A parameter vector cut into parts, one task each, gives the same result as one task.
TEST_P(SgdTest, PartsGiveTheWhole) {
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
  for (unsigned p = 0; p < 3; ++p)
    submit_sgd_update(starpu_data_get_sub_data(w.handle(), 1, p),
                      starpu_data_get_sub_data(grad.handle(), 1, p),
                      starpu_data_get_sub_data(buf.handle(), 1, p), params);
  for (RegisteredVector *v : {&w, &grad, &buf})
    starpu_data_unpartition(v->handle(), STARPU_MAIN_RAM);
  expect_near(w.read(), want.w);
  expect_near(buf.read(), want.buf);
  EXPECT_EQ(testing::count_tasks().cpu_tasks, 3);
}

uint32_t footprint(starpu_data_handle_t w, starpu_data_handle_t g, starpu_data_handle_t m,
                   SgdParams params) {
  starpu_task *task = starpu_task_build(&sgd_update_codelet, STARPU_RW, w, STARPU_R, g, STARPU_RW,
                                        m, STARPU_VALUE, &params, sizeof(params), 0);
  const uint32_t hash = starpu_task_footprint(sgd_update_codelet.model, task,
                                              starpu_worker_get_perf_archtype(0, 0), 0);
  task->detach = 0;  // never submitted: ours to free
  starpu_task_destroy(task);
  return hash;
}

// The perf model must pool every step of a training run, whatever its learning rate.
TEST_P(SgdTest, PerfModelIgnoresHyperParameters) {
  RegisteredVector w(100), g(100), m(100), w2(200), g2(200), m2(200);
  const uint32_t base = footprint(w.handle(), g.handle(), m.handle(), {0.1f, 0.9f, 0.0f, 1});
  EXPECT_EQ(footprint(w.handle(), g.handle(), m.handle(), {0.001f, 0.5f, 1e-4f, 0}), base);
  EXPECT_NE(footprint(w2.handle(), g2.handle(), m2.handle(), {0.1f, 0.9f, 0.0f, 1}), base);
}

TEST_P(SgdTest, MomentumWithoutBufferOrWrongSizesAreRefused) {
  RegisteredVector w(10), g(10), short_buf(9);
  EXPECT_THROW(submit_sgd_update(w.handle(), g.handle(), nullptr, {0.1f, 0.9f, 0.0f, 1}),
               std::invalid_argument);
  EXPECT_THROW(submit_sgd_update(w.handle(), g.handle(), short_buf.handle(), {0.1f, 0.9f, 0.0f, 1}),
               std::invalid_argument);
  EXPECT_THROW(submit_sgd_update(w.handle(), short_buf.handle(), nullptr, {0.1f, 0.0f, 0.0f, 1}),
               std::invalid_argument);
}

STARCNN_INSTANTIATE_SCHEDULER_TESTS(SgdTest);

}  // namespace
}  // namespace starcnn
