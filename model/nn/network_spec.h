// The network description: a small text format, one layer per line.
//
//   # comment (anywhere after '#'); blank lines are ignored
//   input C H W                            first, once: one sample's channels, height, width
//   conv OUT K [stride=S] [pad=P] [name=N] K x K convolution to OUT channels, with bias
//   relu
//   maxpool K                              K x K window, stride K, sizes rounded down
//   flatten                                C x H x W -> C*H*W features (needed before linear)
//   linear OUT [name=N]                    fully connected to OUT features, with bias
//
// Parameterised layers take PyTorch's state_dict names: conv layers conv1, conv2, ... and linear
// layers fc1, fc2, ... in order of appearance, unless given name=N.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

struct NetworkSpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class LayerKind { conv, relu, maxpool, flatten, linear };
const char *layer_kind_name(LayerKind kind);

// One sample's activation: C x H x W, or `flat` features (then c = features, h = w = 1).
struct ActivationShape {
  int c = 0, h = 0, w = 0;
  bool flat = false;
  int64_t size() const { return int64_t(c) * h * w; }
};
std::string to_string(const ActivationShape &shape);  // "16x5x5" or "400"

struct LayerSpec {
  LayerKind kind = LayerKind::relu;
  int line = 0;      // in the description text, 1-based
  std::string name;  // conv and linear only: conv1, fc2, or the explicit name
  int out = 0;       // conv: output channels; linear: output features
  int kernel = 0;    // conv: K; maxpool: window and stride
  int stride = 1;    // conv
  int pad = 0;       // conv
  ActivationShape in, out_shape;
};

struct NetworkSpec {
  std::string text;    // the description it was parsed from
  std::string source;  // what errors call it: a file name or a built-in name
  int input_line = 0;
  ActivationShape input;
  std::vector<LayerSpec> layers;
  ActivationShape output() const { return layers.empty() ? input : layers.back().out_shape; }
};

struct ParameterSpec {
  std::string name;  // "conv1.weight"
  std::vector<int64_t> shape;
};

// Parses and checks a description; errors read "SOURCE line N: what is wrong".
NetworkSpec parse_network(const std::string &text, const std::string &source = "network");
NetworkSpec load_network_file(const std::string &path);
// A built-in network by name (see builtin_networks.h) or else a file path.
NetworkSpec load_network(const std::string &name_or_path);

// The same network on inputs of `channels` channels (e.g. lenet for CIFAR-10's 3): the text's
// input line is rewritten and the whole description checked again.
NetworkSpec with_input_channels(const NetworkSpec &spec, int channels);

// Parameter tensors in PyTorch state_dict order: conv1.weight [OUT,C,K,K], conv1.bias [OUT], ...,
// fc1.weight [OUT,IN], fc1.bias [OUT], ...
std::vector<ParameterSpec> parameter_tensors(const NetworkSpec &spec);

// The convolution of a conv layer on a batch of `n` samples.
Conv2dShape conv_shape(const LayerSpec &layer, uint32_t n);

}  // namespace starcnn
