// The network description parser: the shipped networks against shapes written down from their
// PyTorch definitions, and error messages that name the line.
#include "model/nn/network_spec.h"
#include "model/nn/builtin_networks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace starcnn {
namespace {

using Shape = std::vector<int64_t>;

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The repository's model/networks folder, found from this file's path.
std::string networks_dir() {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("tests/model/")) + "model/nn/networks/";
}

std::vector<std::pair<std::string, Shape>> params_of(const NetworkSpec &spec) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const ParameterSpec &p : parameter_tensors(spec)) out.emplace_back(p.name, p.shape);
  return out;
}

int64_t parameter_count(const NetworkSpec &spec) {
  int64_t n = 0;
  for (const ParameterSpec &p : parameter_tensors(spec)) {
    int64_t size = 1;
    for (int64_t d : p.shape) size *= d;
    n += size;
  }
  return n;
}

// The message of the NetworkSpecError that parsing `text` throws.
std::string error_of(const std::string &text) {
  try {
    parse_network(text, "test.net");
  } catch (const NetworkSpecError &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NetworkSpec, BuiltinNetworksAreTheShippedFiles) {
  // The bundle for the GPU machine carries the test binaries without the source tree.
  if (!std::filesystem::is_directory(networks_dir()))
    GTEST_SKIP() << "no source tree at " << networks_dir();
  std::vector<std::string> names = builtin_network_names();
  for (const char *name : {"lenet", "wide"}) {
    ASSERT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    std::string file_text = read_text(networks_dir() + name + ".net");
    ASSERT_FALSE(file_text.empty()) << networks_dir() << name;
    EXPECT_EQ(builtin_network_text(name), file_text) << name;
    EXPECT_EQ(load_network(name).text, file_text);
  }
  EXPECT_EQ(builtin_network_text("nonesuch"), nullptr);
}

TEST(NetworkSpec, LenetMatchesPyTorchLenet) {
  NetworkSpec spec = load_network("lenet");
  // PyTorch: conv1 = Conv2d(1, 6, 5), conv2 = Conv2d(6, 16, 5), fc1 = Linear(16*5*5, 120),
  // fc2 = Linear(120, 84), fc3 = Linear(84, 10); relu and 2x2 max pools between.
  std::vector<std::pair<std::string, Shape>> expected = {
      {"conv1.weight", {6, 1, 5, 5}},  {"conv1.bias", {6}},
      {"conv2.weight", {16, 6, 5, 5}}, {"conv2.bias", {16}},
      {"fc1.weight", {120, 400}},      {"fc1.bias", {120}},
      {"fc2.weight", {84, 120}},       {"fc2.bias", {84}},
      {"fc3.weight", {10, 84}},        {"fc3.bias", {10}}};
  EXPECT_EQ(params_of(spec), expected);
  EXPECT_EQ(parameter_count(spec), 61706);

  std::vector<std::string> kinds, shapes;
  for (const LayerSpec &layer : spec.layers) {
    kinds.push_back(layer_kind_name(layer.kind));
    shapes.push_back(to_string(layer.out_shape));
  }
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"conv", "relu", "maxpool", "conv", "relu", "maxpool",
                                      "flatten", "linear", "relu", "linear", "relu", "linear"}));
  EXPECT_EQ(shapes,
            (std::vector<std::string>{"6x28x28", "6x28x28", "6x14x14", "16x10x10", "16x10x10",
                                      "16x5x5", "400", "120", "120", "84", "84", "10"}));
  EXPECT_EQ(to_string(spec.input), "1x32x32");
  EXPECT_EQ(spec.layers[0].name, "conv1");
  EXPECT_EQ(spec.layers[11].name, "fc3");
}

TEST(NetworkSpec, LenetWithThreeChannels) {
  NetworkSpec spec = with_input_channels(load_network("lenet"), 3);
  EXPECT_EQ(to_string(spec.input), "3x32x32");
  std::vector<ParameterSpec> params = parameter_tensors(spec);
  ASSERT_EQ(params.size(), 10u);
  EXPECT_EQ(params[0].shape, (Shape{6, 3, 5, 5}));
  EXPECT_EQ(params[2].shape, (Shape{16, 6, 5, 5}));
  EXPECT_EQ(params[4].shape, (Shape{120, 400}));
  EXPECT_EQ(parameter_count(spec), 62006);
  // The text is rewritten too (it goes into checkpoints), and parses to the same network.
  EXPECT_NE(spec.text.find("\ninput 3 32 32"), std::string::npos) << spec.text;
  EXPECT_EQ(params_of(parse_network(spec.text)), params_of(spec));
  EXPECT_THROW(with_input_channels(spec, 0), NetworkSpecError);
}

TEST(NetworkSpec, WideMatchesItsPyTorchDefinition) {
  NetworkSpec spec = load_network("wide");
  std::vector<std::pair<std::string, Shape>> expected = {
      {"conv1.weight", {64, 3, 3, 3}},    {"conv1.bias", {64}},
      {"conv2.weight", {64, 64, 3, 3}},   {"conv2.bias", {64}},
      {"conv3.weight", {128, 64, 3, 3}},  {"conv3.bias", {128}},
      {"conv4.weight", {128, 128, 3, 3}}, {"conv4.bias", {128}},
      {"conv5.weight", {256, 128, 3, 3}}, {"conv5.bias", {256}},
      {"conv6.weight", {256, 256, 3, 3}}, {"conv6.bias", {256}},
      {"fc1.weight", {10, 4096}},         {"fc1.bias", {10}}};
  EXPECT_EQ(params_of(spec), expected);
  EXPECT_EQ(parameter_count(spec), 1186378);
  int convs = 0, pools = 0;
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind == LayerKind::conv) {
      ++convs;
      EXPECT_EQ(layer.pad, 1);
      EXPECT_EQ(layer.stride, 1);
      // pad 1 keeps the size.
      EXPECT_EQ(layer.out_shape.h, layer.in.h);
    }
    pools += layer.kind == LayerKind::maxpool;
  }
  EXPECT_EQ(convs, 6);
  EXPECT_EQ(pools, 3);
  EXPECT_EQ(to_string(spec.output()), "10");
}

TEST(NetworkSpec, StridePadOddSizesAndNames) {
  NetworkSpec spec = parse_network(
      "\r\n# a comment line\n\tinput 3 7 9   # trailing comment\r\n\n"
      "conv 4 3 stride=2 pad=1\n"  // (7+2-3)/2+1 = 4, (9+2-3)/2+1 = 5
      "maxpool 2\n"                // 2x2 (5 rounds down)
      "conv 5 2 name=head_conv\n"  // 1x1
      "flatten\n"
      "linear 7 name=head\n"
      "linear 2\n");
  ASSERT_EQ(spec.layers.size(), 6u);
  EXPECT_EQ(to_string(spec.layers[0].out_shape), "4x4x5");
  EXPECT_EQ(to_string(spec.layers[1].out_shape), "4x2x2");
  EXPECT_EQ(to_string(spec.layers[2].out_shape), "5x1x1");
  EXPECT_EQ(spec.input_line, 3);
  EXPECT_EQ(spec.layers[0].line, 5);
  std::vector<std::pair<std::string, Shape>> expected = {
      {"conv1.weight", {4, 3, 3, 3}}, {"conv1.bias", {4}},     {"head_conv.weight", {5, 4, 2, 2}},
      {"head_conv.bias", {5}},        {"head.weight", {7, 5}}, {"head.bias", {7}},
      {"fc2.weight", {2, 7}},         {"fc2.bias", {2}}};
  EXPECT_EQ(params_of(spec), expected);
}

TEST(NetworkSpec, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("input 1 32 32\n\n# comment\nconv 6\n"),
            "test.net line 4: conv needs OUT and K, got 'conv 6'");
  struct Case {
    const char *text;
    const char *message;  // a part of the expected message
  };
  const Case cases[] = {
      {"", "test.net: no 'input C H W' line"},
      {"input 1 8 8\n", "test.net: the network has no layers"},
      {"conv 6 5\n", "line 1: the first line must be 'input C H W', got 'conv 6 5'"},
      {"input 1 8\nrelu\n", "line 1: input needs C H W"},
      {"input 1 8 8\nrelu\ninput 1 8 8\n", "line 3: a second input line (the first is line 1)"},
      {"input 1 8 8\npool 2\n", "line 2: unknown layer 'pool'"},
      {"input 1 8 8\nconv 6 x\n", "line 2: conv K must be a whole number, got 'x'"},
      {"input 1 8 8\nconv -6 5\n", "line 2: conv OUT must be a whole number, got '-6'"},
      {"input 1 8 8\nconv 0 5\n", "line 2: conv OUT must be at least 1, got 0"},
      {"input 1 8 8\nconv 6 3 stride=0\n", "line 2: conv stride must be at least 1"},
      {"input 1 8 8\nconv 6 3 dilation=2\n", "line 2: unknown option 'dilation=2' for conv"},
      {"input 1 8 8\nconv 6 3 pad=1 pad=2\n", "line 2: option pad= given twice"},
      {"input 1 8 8\nconv 6 99999999\n", "line 2: conv K 99999999 is too large"},
      {"input 1 4 4\n\nconv 2 5\n", "line 3: conv kernel 5 with pad 0 does not fit the 1x4x4"},
      {"input 1 4 4\nconv 2 5 pad=1\n", ""},  // fits: (4+2-5)+1 = 2
      {"input 1 1 1\nmaxpool 2\n", "line 2: maxpool 2 of the 1x1x1 input would be empty"},
      {"input 1 8 8\nmaxpool\n", "line 2: maxpool needs K"},
      {"input 1 8 8\nrelu 3\n", "line 2: relu takes no arguments"},
      {"input 1 8 8\nflatten all\n", "line 2: flatten takes no arguments"},
      {"input 1 8 8\nrelu\nlinear 10\n",
       "line 3: linear needs a flat input: put 'flatten' before it (the input is 1x8x8)"},
      {"input 1 8 8\nflatten\nconv 2 3\n", "line 3: conv needs a C x H x W input, but it is flat"},
      {"input 1 8 8\nflatten\nmaxpool 2\n", "line 3: maxpool needs a C x H x W input"},
      {"input 1 8 8\nflatten\nlinear 3 stride=2\n", "line 3: unknown option 'stride=2' for linear"},
      {"input 1 8 8\nflatten\nlinear 3 name=9x\n", "line 3: name '9x' is not a valid name"},
      {"input 1 8 8\nconv 2 3 name=fc2\nflatten\nlinear 3\nlinear 3\n",
       "line 5: the name fc2 is already used on line 2"},
      {"input 1 8 8\nconv 2 3 name=a 4\n", "line 2: '4' comes after an option"},
  };
  for (const Case &c : cases) {
    std::string message = error_of(c.text);
    if (*c.message == '\0') {
      EXPECT_EQ(message, "(no error)") << c.text;
    } else {
      EXPECT_NE(message.find(c.message), std::string::npos)
          << "text:\n"
          << c.text << "\nmessage: " << message << "\nexpected: " << c.message;
    }
  }
}

TEST(NetworkSpec, MissingFileNamesIt) {
  try {
    load_network("/nonexistent/dir/x.net");
    FAIL() << "no error";
  } catch (const NetworkSpecError &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.net"), std::string::npos);
  }
}

}  // namespace
}  // namespace starcnn
