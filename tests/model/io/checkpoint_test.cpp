// Checkpoints: parameters, momentum and metadata survive a save and load, and loading against a
// different network names the first mismatch.
#include "model/io/checkpoint.h"
#include "model/io/atomic_file.h"
#include "tests/support/random_data.h"
#include "tests/support/scratch_dir.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

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
  c.math = "tf32";
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
  EXPECT_EQ(loaded.math, "tf32");
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
  EXPECT_EQ(raw.metadata.at("math"), "tf32");
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

// Checkpoints saved before the math was recorded have no "math" and still load (math ""); one
// saved without a math writes none.
TEST(Checkpoint, MathIsOptional) {
  ScratchDir dir;
  const std::string path = dir.file("old.safetensors");
  Checkpoint saved = lenet_checkpoint(true);
  save_checkpoint(path, saved);
  TensorFile old = read_safetensors(path);
  ASSERT_EQ(old.metadata.erase("math"), 1u);
  write_safetensors(path, old);
  Checkpoint loaded = load_checkpoint(path, load_network("lenet"));
  EXPECT_EQ(loaded.math, "");
  expect_equal(loaded.parameters, saved.parameters);
  expect_equal(loaded.momentum, saved.momentum);
  EXPECT_EQ(loaded.step, saved.step);

  save_checkpoint(path, loaded);
  EXPECT_EQ(read_safetensors(path).metadata.count("math"), 0u);
  saved.math = "fp32";
  save_checkpoint(path, saved);
  EXPECT_EQ(read_checkpoint(path).math, "fp32");
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

std::string read_raw_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A NaN or an infinity is never written (the file keeps its last good content) and never read.
TEST(Checkpoint, NonFiniteWeightsAreNeitherSavedNorLoaded) {
  ScratchDir dir;
  const std::string path = dir.file("c.safetensors");
  const Checkpoint good = lenet_checkpoint(true);
  save_checkpoint(path, good);
  const std::string before = read_raw_file(path);
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
  for (const float bad : bad_values) {
    for (const bool in_momentum : {false, true}) {
      Checkpoint c = good;
      (in_momentum ? c.momentum : c.parameters)[2].values[5] = bad;
      const std::string name = c.parameters[2].name + "[5] is " + (std::isnan(bad) ? "nan" : "inf");
      EXPECT_EQ(first_non_finite(in_momentum ? c.momentum : c.parameters), name);
      try {
        save_checkpoint(path, c);
        ADD_FAILURE() << "saved " << name;
      } catch (const SafetensorsError &e) {
        EXPECT_NE(std::string(e.what()).find(
                      "not written: " + std::string(in_momentum ? "momentum " : "") + name),
                  std::string::npos)
            << e.what();
      }
      EXPECT_EQ(read_raw_file(path), before);
      EXPECT_EQ(dir.listing(), std::vector<std::string>{"c.safetensors"});

      // The same file written by another tool: refused on reading, with the tensor named.
      TensorFile raw = read_safetensors(path);
      for (NamedTensor &t : raw.tensors)
        if (t.name == (in_momentum ? momentum_prefix : "") + c.parameters[2].name)
          t.values[5] = bad;
      const std::string bad_path = dir.file("bad.safetensors");
      write_safetensors(bad_path, raw);
      const std::string message = load_error(bad_path, load_network("lenet"));
      EXPECT_NE(message.find(bad_path), std::string::npos) << message;
      EXPECT_NE(message.find("[5] is " + std::string(std::isnan(bad) ? "nan" : "inf")),
                std::string::npos)
          << message;
      std::remove(bad_path.c_str());
    }
  }
}

TEST(Checkpoint, ResumeNeedsTheSameNetworkAndPreprocessing) {
  const Checkpoint c = lenet_checkpoint(false);
  const NetworkSpec lenet = load_network("lenet");
  EXPECT_NO_THROW(check_same_run(c, lenet, c.preprocess, "c"));
  // Comments and spacing do not matter, the layers do.
  EXPECT_NO_THROW(
      check_same_run(c, parse_network("# a copy\n" + lenet.text + "\n\n"), c.preprocess, "c"));
  auto error = [&](const NetworkSpec &spec, const Preprocess &pre) {
    try {
      check_same_run(c, spec, pre, "c.safetensors");
    } catch (const SafetensorsError &e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // One more relu changes no tensor, but it is another network.
  std::string text = lenet.text;
  text.insert(text.rfind("linear"), "relu\n");
  const std::string relu = error(parse_network(text, "more.net"), c.preprocess);
  EXPECT_NE(relu.find("checkpoint c.safetensors: layer "), std::string::npos) << relu;
  EXPECT_NE(relu.find("in more.net it is"), std::string::npos) << relu;
  const std::string pre = error(lenet, Preprocess{2, {0.2860f}, {0.3530f}});
  EXPECT_NE(pre.find("trained with preprocessing {\"pad\": 2, \"mean\": [0.1307]"),
            std::string::npos)
      << pre;
  EXPECT_NE(pre.find("this run's data set has {\"pad\": 2, \"mean\": [0.286]"), std::string::npos)
      << pre;
  const std::string channels = error(with_input_channels(lenet, 3), c.preprocess);
  EXPECT_NE(channels.find("takes 1x32x32 inputs"), std::string::npos) << channels;
}

// A save killed before its rename leaves PATH.tmp.XXXXXX behind: the next save removes those,
// and only those.
TEST(Checkpoint, NextSaveRemovesStaleTemporaries) {
  ScratchDir dir;
  const std::string path = dir.file("c.safetensors");
  for (const char *name :
       {"c.safetensors.tmp.Ab3dE9", "c.safetensors.tmp.zzzzzz", "c.safetensors.tmp.toolong7",
        "c.safetensors.tmp.ab-de_", "other.safetensors.tmp.Ab3dE9"})
    std::ofstream(dir.file(name)) << std::string(4096, 'x');
  ASSERT_EQ(mkdir(dir.file("c.safetensors.tmp.dir123").c_str(), 0700), 0);
  save_checkpoint(path, lenet_checkpoint(false));
  EXPECT_EQ(dir.listing(),
            (std::vector<std::string>{"c.safetensors", "c.safetensors.tmp.ab-de_",
                                      "c.safetensors.tmp.dir123", "c.safetensors.tmp.toolong7",
                                      "other.safetensors.tmp.Ab3dE9"}));
}

TEST(Checkpoint, DestinationIsCheckedBeforeTheRun) {
  ScratchDir dir;
  EXPECT_NO_THROW(check_writable_destination(dir.file("c.safetensors")));
  EXPECT_EQ(dir.listing(), std::vector<std::string>{}) << "the probe file must be removed";
  std::ofstream(dir.file("plain")) << "x";
  ASSERT_EQ(mkdir(dir.file("sub").c_str(), 0700), 0);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"/nonexistent/dir/c.safetensors", "no directory /nonexistent/dir"},
      {dir.file("plain") + "/c.safetensors", "is not a directory"},
      {dir.file("sub"), "it is a directory"},
      {"/proc/c.safetensors", "cannot create a file in /proc"},
  };
  for (const auto &[path, problem] : bad) {
    try {
      check_writable_destination(path);
      ADD_FAILURE() << path << " accepted";
    } catch (const AtomicFileError &e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("cannot write " + path), std::string::npos) << message;
      EXPECT_NE(message.find(problem), std::string::npos) << message;
    }
  }
}

// 400,000 keys in a 24 MB header (under the 100 MB cap): refused in seconds, not minutes.
TEST(Checkpoint, HeaderOfManyKeysIsQuick) {
  ScratchDir dir;
  const std::string path = dir.file("many.safetensors");
  std::string header = "{";
  for (int i = 0; i < 400000; ++i)
    header += "\"tensor" + std::to_string(i) +
              "\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [0, 0]}, ";
  header += "\"last\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}";
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += char((uint64_t(header.size()) >> (8 * i)) & 0xFF);
  bytes += header + std::string(4, '\0');
  std::ofstream(path, std::ios::binary) << bytes;
  const auto start = std::chrono::steady_clock::now();
  const std::string message = load_error(path, load_network("lenet"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(message.find("metadata has no \"format\""), std::string::npos) << message;
  EXPECT_LT(seconds, 60.0);  // about 2 s alone; the quadratic check took over 6 minutes
}

}  // namespace
}  // namespace starcnn
