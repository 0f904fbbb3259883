// Checkpoints: parameters, momentum and metadata survive a save and load, and loading against a
// different network names the first mismatch.
#include "model/io/checkpoint.h"
#include "tests/support/random_data.h"
#include "tests/support/scratch_dir.h"

#include <gtest/gtest.h>

#include <cstring>

namespace starcnn {
namespace {

using starcnn::testing::random_floats;
using starcnn::testing::ScratchDir;

std::vector<NamedTensor> random_tensors(const NetworkSpec &spec, uint32_t seed) {
  std::vector<NamedTensor> tensors;
  for (const ParameterSpec &p : parameter_tensors(spec))
    tensors.push_back({p.name, p.shape, random_floats(element_count(p.shape), seed++)});
  return tensors;
}

Checkpoint lenet_checkpoint(bool with_momentum) {
  NetworkSpec spec = load_network("lenet");
  Checkpoint c;
  c.network = spec.text;
  c.preprocess = {2, {0.1307f}, {0.3081f}};
  c.step = 123456789012;
  c.epoch = 7;
  c.parameters = random_tensors(spec, 100);
  if (with_momentum) c.momentum = random_tensors(spec, 200);
  return c;
}

std::string load_error(const std::string &path, const NetworkSpec &spec) {
  try {
    load_checkpoint(path, spec);
  } catch (const SafetensorsError &e) {
    return e.what();
  }
  return "(no error)";
}

void expect_equal(const std::vector<NamedTensor> &a, const std::vector<NamedTensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].shape, b[i].shape);
    EXPECT_EQ(a[i].values, b[i].values) << a[i].name;
  }
}

TEST(Checkpoint, RoundTripWithMomentum) {
  ScratchDir dir;
  std::string path = dir.file("lenet.safetensors");
  Checkpoint saved = lenet_checkpoint(true);
  save_checkpoint(path, saved);
  Checkpoint loaded = load_checkpoint(path, load_network("lenet"));
  expect_equal(loaded.parameters, saved.parameters);
  expect_equal(loaded.momentum, saved.momentum);
  EXPECT_EQ(loaded.network, saved.network);
  EXPECT_EQ(loaded.step, 123456789012);
  EXPECT_EQ(loaded.epoch, 7);
  EXPECT_EQ(loaded.preprocess.pad, 2);
  EXPECT_EQ(loaded.preprocess.mean, std::vector<float>{0.1307f});
  EXPECT_EQ(loaded.preprocess.stddev, std::vector<float>{0.3081f});

  // The file holds what PyTorch expects: state_dict names, then the prefixed momentum.
  TensorFile raw = read_safetensors(path);
  ASSERT_EQ(raw.tensors.size(), 20u);
  EXPECT_EQ(raw.tensors[0].name, "conv1.weight");
  EXPECT_EQ(raw.tensors[9].name, "fc3.bias");
  EXPECT_EQ(raw.tensors[10].name, "optimizer.momentum.conv1.weight");
  EXPECT_EQ(raw.metadata.at("step"), "123456789012");
  EXPECT_EQ(raw.metadata.at("preprocess"), R"({"pad": 2, "mean": [0.1307], "std": [0.3081]})");
}

TEST(Checkpoint, RoundTripWithoutMomentum) {
  ScratchDir dir;
  std::string path = dir.file("c.safetensors");
  Checkpoint saved = lenet_checkpoint(false);
  save_checkpoint(path, saved);
  Checkpoint loaded = load_checkpoint(path, parse_network(saved.network));
  expect_equal(loaded.parameters, saved.parameters);
  EXPECT_TRUE(loaded.momentum.empty());
}

TEST(Checkpoint, LoadsInTheNetworksOrder) {
  ScratchDir dir;
  std::string path = dir.file("c.safetensors");
  Checkpoint saved = lenet_checkpoint(false);
  Checkpoint reversed = saved;
  std::reverse(reversed.parameters.begin(), reversed.parameters.end());
  save_checkpoint(path, reversed);
  expect_equal(load_checkpoint(path, load_network("lenet")).parameters, saved.parameters);
}

TEST(Checkpoint, WrongNetworkNamesTheFirstMismatch) {
  ScratchDir dir;
  std::string path = dir.file("x.safetensors");
  save_checkpoint(path, lenet_checkpoint(true));
  NetworkSpec lenet3 = with_input_channels(load_network("lenet"), 3);
  EXPECT_EQ(load_error(path, lenet3), "checkpoint " + path +
                                          ": conv1.weight has shape [6,1,5,5], the network needs "
                                          "[6,3,5,5]");
  std::string wide_error = load_error(path, load_network("wide"));
  EXPECT_EQ(wide_error, "checkpoint " + path +
                            ": conv1.weight has shape [6,1,5,5], the network needs [64,3,3,3]");

  // One more layer: fc4 is missing. One fewer: fc3 is unexpected.
  NetworkSpec longer = parse_network(load_network("lenet").text + "relu\nlinear 5\n");
  EXPECT_EQ(load_error(path, longer),
            "checkpoint " + path + ": fc4.weight is missing (the network needs [5,10])");
  std::string text = load_network("lenet").text;
  NetworkSpec shorter = parse_network(text.substr(0, text.rfind("relu")));
  EXPECT_EQ(load_error(path, shorter),
            "checkpoint " + path + ": unexpected tensor fc3.weight (not in the network)");
}

TEST(Checkpoint, BadMomentumIsNamed) {
  ScratchDir dir;
  std::string path = dir.file("m.safetensors");
  Checkpoint c = lenet_checkpoint(true);
  c.momentum[4].shape = {400, 120};  // fc1.weight transposed
  save_checkpoint(path, c);
  EXPECT_EQ(load_error(path, load_network("lenet")),
            "checkpoint " + path +
                ": optimizer.momentum.fc1.weight has shape [400,120], the network needs "
                "[120,400]");

  // Momentum for only some parameters.
  TensorFile file = read_safetensors(path);
  file.tensors.pop_back();
  file.tensors[14].shape = {120, 400};
  write_safetensors(path, file);
  EXPECT_EQ(
      load_error(path, load_network("lenet")),
      "checkpoint " + path + ": optimizer.momentum.fc3.bias is missing (the network needs [10])");
}

TEST(Checkpoint, BadMetadataIsNamed) {
  ScratchDir dir;
  std::string path = dir.file("meta.safetensors");
  save_checkpoint(path, lenet_checkpoint(false));
  const TensorFile good = read_safetensors(path);
  struct Case {
    const char *key, *value, *message;
  };
  const Case cases[] = {
      {"format", "other 2", "metadata \"format\" is 'other 2'"},
      {"step", "-1", "metadata \"step\" must be a whole number, got '-1'"},
      {"epoch", "", "metadata \"epoch\" must be a whole number"},
      {"preprocess", "{\"pad\": 2, \"mean\": [0.1]", "bad preprocess metadata: JSON error"},
      {"preprocess", R"({"pad": 2, "mean": [0.1, 0.2], "std": [0.3]})",
       "mean has 2 values but std has 1"},
      {"preprocess", R"({"pad": 2, "mean": [0.1], "std": [0]})", "std values must be positive"},
      {"preprocess", R"({"mean": [0.1], "std": [0.2]})", "no \"pad\""},
      {"preprocess", R"({"pad": 2, "mean": ["a"], "std": [0.2]})", "mean value must be a number"},
  };
  for (const Case &c : cases) {
    TensorFile file = good;
    file.metadata[c.key] = c.value;
    write_safetensors(path, file);
    std::string message = load_error(path, load_network("lenet"));
    EXPECT_NE(message.find("checkpoint " + path + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "message: " << message << "\nexpected: " << c.message;
  }
  TensorFile file = good;
  file.metadata.erase("network");
  write_safetensors(path, file);
  EXPECT_NE(load_error(path, load_network("lenet")).find("metadata has no \"network\""),
            std::string::npos);
}

TEST(Checkpoint, PreprocessRoundTripsEveryFloat) {
  Preprocess p{4, random_floats(3, 9, -1e-3f, 1e3f), random_floats(3, 10, 1e-6f, 10.0f)};
  p.mean[0] = 0.4914f;
  Preprocess back = preprocess_from_json(preprocess_to_json(p), "test");
  EXPECT_EQ(back.pad, 4);
  EXPECT_EQ(back.mean, p.mean);
  EXPECT_EQ(back.stddev, p.stddev);
}

}  // namespace
}  // namespace starcnn
