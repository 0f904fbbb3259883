// The evaluator against an independent float64 forward pass written here: loss, accuracy and
// class probabilities of a small random data set, for several batch sizes and slot counts
// (short last batch, batch larger than the data set, batch 1), under every scheduler; and a
// network small enough to check by hand.
#include "model/train/evaluator.h"

#include "codelets/support/codelet_support.h"
#include "tests/support/random_data.h"
#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace starcnn {
namespace {

using starcnn::testing::random_floats;
using starcnn::testing::StarpuRuntime;

MachineWorkers machine() {
  return {int(starpu_cpu_worker_get_count()), int(starpu_cuda_worker_get_count())};
}

Dataset random_dataset(size_t count, uint32_t seed) {
  // 2 channels of 5x4 bytes padded by 1 to the network's 7x6.
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255), label(0, 3);
  std::vector<uint8_t> pixels(count * 2 * 5 * 4), labels(count);
  for (auto &p : pixels) p = uint8_t(byte(gen));
  for (auto &l : labels) l = uint8_t(label(gen));
  return make_dataset(pixels.data(), labels.data(), count, 2, 5, 4, 4,
                      {1, {0.5f, 0.4f}, {0.3f, 0.25f}});
}

const char *const random_network =
    "input 2 7 6\n"
    "conv 3 3 pad=1\n"
    "relu\n"
    "maxpool 2\n"
    "flatten\n"
    "linear 5\n"
    "relu\n"
    "linear 4\n";

// The logits of one sample by a plain double-precision reading of the description.
std::vector<double> reference_logits(const NetworkSpec &spec,
                                     const std::map<std::string, NamedTensor> &params,
                                     const float *sample) {
  std::vector<double> x(sample, sample + spec.input.size());
  for (const LayerSpec &layer : spec.layers) {
    const ActivationShape &in = layer.in, &out = layer.out_shape;
    std::vector<double> y(size_t(out.size()));
    if (layer.kind == LayerKind::conv) {
      const std::vector<float> &w = params.at(layer.name + ".weight").values;
      const std::vector<float> &b = params.at(layer.name + ".bias").values;
      const int k = layer.kernel;
      for (int o = 0; o < out.c; ++o)
        for (int oy = 0; oy < out.h; ++oy)
          for (int ox = 0; ox < out.w; ++ox) {
            double sum = b[size_t(o)];
            for (int c = 0; c < in.c; ++c)
              for (int ky = 0; ky < k; ++ky)
                for (int kx = 0; kx < k; ++kx) {
                  const int iy = oy * layer.stride + ky - layer.pad;
                  const int ix = ox * layer.stride + kx - layer.pad;
                  if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                  sum += double(w[size_t(((o * in.c + c) * k + ky) * k + kx)]) *
                         x[size_t((c * in.h + iy) * in.w + ix)];
                }
            y[size_t((o * out.h + oy) * out.w + ox)] = sum;
          }
    } else if (layer.kind == LayerKind::relu) {
      for (size_t i = 0; i < y.size(); ++i) y[i] = std::max(0.0, x[i]);
    } else if (layer.kind == LayerKind::maxpool) {
      for (int c = 0; c < out.c; ++c)
        for (int oy = 0; oy < out.h; ++oy)
          for (int ox = 0; ox < out.w; ++ox) {
            double m = -INFINITY;
            for (int dy = 0; dy < 2; ++dy)
              for (int dx = 0; dx < 2; ++dx)
                m = std::max(m, x[size_t((c * in.h + 2 * oy + dy) * in.w + 2 * ox + dx)]);
            y[size_t((c * out.h + oy) * out.w + ox)] = m;
          }
    } else if (layer.kind == LayerKind::flatten) {
      y = x;
    } else {
      const std::vector<float> &w = params.at(layer.name + ".weight").values;
      const std::vector<float> &b = params.at(layer.name + ".bias").values;
      const size_t n_in = size_t(in.size());
      for (size_t o = 0; o < y.size(); ++o) {
        double sum = b[o];
        for (size_t i = 0; i < n_in; ++i) sum += double(w[o * n_in + i]) * x[i];
        y[o] = sum;
      }
    }
    x = std::move(y);
  }
  return x;
}

struct Reference {
  double loss = 0, accuracy = 0;
  size_t near_ties = 0;  // samples whose top two logits are too close to rank in float32
  std::vector<std::vector<double>> probabilities;
  std::vector<int> predicted;
};

Reference reference(const NetworkSpec &spec, ParameterSet &params, const Dataset &data) {
  std::map<std::string, NamedTensor> by_name;
  for (NamedTensor &t : params.read(false)) by_name[t.name] = t;
  Reference r;
  for (size_t s = 0; s < data.count; ++s) {
    const std::vector<double> z =
        reference_logits(spec, by_name, &data.images[s * data.sample_size()]);
    const int best = int(std::max_element(z.begin(), z.end()) - z.begin());
    double sum = 0, second = -INFINITY;
    for (size_t c = 0; c < z.size(); ++c) {
      sum += std::exp(z[c] - z[size_t(best)]);
      if (int(c) != best) second = std::max(second, z[c]);
    }
    std::vector<double> p(z.size());
    for (size_t c = 0; c < z.size(); ++c) p[c] = std::exp(z[c] - z[size_t(best)]) / sum;
    r.loss -= std::log(p[size_t(data.labels[s])]);
    r.accuracy += best == data.labels[s];
    r.near_ties += z[size_t(best)] - second < 1e-4;
    r.probabilities.push_back(p);
    r.predicted.push_back(best);
  }
  r.loss /= double(data.count);
  r.accuracy /= double(data.count);
  return r;
}

class EvaluatorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EvaluatorTest, MatchesFloat64Reference) {
  StarpuRuntime runtime(GetParam(), 0);
  const NetworkSpec spec = parse_network(random_network, "random");
  ParameterSet params(spec, parse_network_plan("none"), machine());
  params.initialize(7);
  // Larger weights than PyTorch's default spread the logits so the loss is far from log(4).
  std::vector<NamedTensor> tensors = params.read(false);
  for (size_t i = 0; i < tensors.size(); ++i)
    tensors[i].values = random_floats(tensors[i].values.size(), uint32_t(50 + i), -0.8f, 0.8f);
  params.write(tensors, false);
  const Dataset data = random_dataset(37, 11);
  const Reference ref = reference(spec, params, data);
  ASSERT_GT(std::fabs(ref.loss - std::log(4.0)), 0.05);  // the check is not trivially met

  // {batch, slots}: short last batch, batch over the data set, batch 1, default slot count.
  const std::vector<std::pair<size_t, size_t>> cases = {{8, 3}, {50, 2}, {1, 2}, {10, 0}, {37, 4}};
  for (const auto &[batch, slots] : cases) {
    SCOPED_TRACE("batch " + std::to_string(batch) + ", slots " + std::to_string(slots));
    Evaluator evaluator(spec, params, batch, slots);
    if (slots > 0) {
      EXPECT_EQ(evaluator.slots(), slots);
    }
    for (int pass = 0; pass < 2; ++pass) {  // a second pass reuses the slots and their stats
      const Evaluation e = evaluator.evaluate(data);
      EXPECT_EQ(e.samples, 37u);
      EXPECT_NEAR(e.loss, ref.loss, 1e-5 * std::max(1.0, ref.loss));
      EXPECT_LE(std::fabs(e.accuracy - ref.accuracy), double(ref.near_ties) / 37.0 + 1e-9);
      EXPECT_GT(e.seconds, 0.0);
    }
    const Classification c = evaluator.classify(data);
    ASSERT_EQ(c.samples, 37u);
    ASSERT_EQ(c.classes, 4);
    for (size_t s = 0; s < 37; ++s) {
      for (size_t k = 0; k < 4; ++k)
        EXPECT_NEAR(c.probabilities[s * 4 + k], ref.probabilities[s][k], 1e-5)
            << "sample " << s << " class " << k;
      if (ref.near_ties == 0) {
        EXPECT_EQ(c.predicted[s], ref.predicted[s]) << "sample " << s;
      }
    }
    // A smaller data set changes the short batch's size.
    const Dataset few = random_dataset(5, 12);
    const Reference few_ref = reference(spec, params, few);
    EXPECT_NEAR(evaluator.evaluate(few).loss, few_ref.loss, 1e-5 * std::max(1.0, few_ref.loss));
  }
}

TEST_P(EvaluatorTest, HandCheckedTinyNetwork) {
  StarpuRuntime runtime(GetParam(), 0);
  // Logits are the two pixels scaled to [0, 1]: identity weights, zero bias, no normalisation.
  const NetworkSpec spec = parse_network("input 1 1 2\nflatten\nlinear 2\n", "tiny");
  ParameterSet params(spec, parse_network_plan("none"), machine());
  params.write({{"fc1.weight", {2, 2}, {1, 0, 0, 1}}, {"fc1.bias", {2}, {0, 0}}}, false);
  const uint8_t pixels[] = {255, 0, 0, 255, 255, 255};
  const uint8_t labels[] = {0, 0, 1};
  const Dataset data = make_dataset(pixels, labels, 3, 1, 1, 2, 2, {0, {0.0f}, {1.0f}});
  // Logits [1,0] label 0: right, loss log(1+e^-1); [0,1] label 0: wrong, loss log(1+e);
  // [1,1] label 1: a tie goes to the first class, so wrong, loss log 2.
  const double expected_loss =
      (std::log1p(std::exp(-1.0)) + std::log1p(std::exp(1.0)) + std::log(2.0)) / 3.0;  // 0.773224
  Evaluator evaluator(spec, params, 2, 2);  // one full batch and a short one
  const Evaluation e = evaluator.evaluate(data);
  EXPECT_NEAR(e.loss, expected_loss, 1e-6);
  EXPECT_NEAR(e.loss, 0.773224, 1e-6);
  EXPECT_NEAR(e.accuracy, 1.0 / 3.0, 1e-9);
  const Classification c = evaluator.classify(data);
  EXPECT_EQ(c.predicted, (std::vector<int32_t>{0, 1, 0}));
  const double big = 1.0 / (1.0 + std::exp(-1.0));  // 0.731059
  const std::vector<double> expected = {big, 1 - big, 1 - big, big, 0.5, 0.5};
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(c.probabilities[i], expected[i], 1e-6) << i;
  EXPECT_NEAR(c.logits[0], 1.0, 1e-6);
  EXPECT_NEAR(c.logits[3], 1.0, 1e-6);
}

TEST_P(EvaluatorTest, RejectsDataOfAnotherShape) {
  StarpuRuntime runtime(GetParam(), 0);
  const NetworkSpec spec = parse_network(random_network, "random");
  ParameterSet params(spec, parse_network_plan("none"), machine());
  Evaluator evaluator(spec, params, 4, 2);
  const uint8_t pixels[2 * 7 * 7] = {};
  const uint8_t labels[1] = {};
  const Dataset wrong = make_dataset(pixels, labels, 1, 2, 7, 7, 4, {0, {0, 0}, {1, 1}});
  try {
    evaluator.evaluate(wrong);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("2x7x6"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2x7x7"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, EvaluatorTest,
                         ::testing::ValuesIn(starcnn::testing::test_schedulers()),
                         starcnn::testing::scheduler_test_name);

}  // namespace
}  // namespace starcnn
