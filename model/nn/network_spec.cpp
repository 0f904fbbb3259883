#include "model/nn/network_spec.h"

#include "model/io/regular_file.h"
#include "model/nn/builtin_networks.h"

#include <cctype>
#include <limits>
#include <map>
#include <sstream>

namespace starcnn {

namespace {

// Any larger size is surely a typo, and keeps every product of sizes inside int64_t.
constexpr long max_size = 1 << 20;
// A network description is a few lines; a larger file is not one.
constexpr uint64_t max_network_file_bytes = 1 << 20;

struct Line {
  int number;
  std::string text;                // without the comment, for messages
  std::vector<std::string> words;  // split on spaces and tabs
};

std::vector<Line> split_lines(const std::string &text) {
  std::vector<Line> lines;
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    std::string body = raw.substr(0, raw.find('#'));
    if (!body.empty() && body.back() == '\r') body.pop_back();
    std::istringstream words_in(body);
    Line line{number, {}, {}};
    for (std::string word; words_in >> word;) line.words.push_back(word);
    if (line.words.empty()) continue;
    for (size_t i = 0; i < line.words.size(); ++i) line.text += (i ? " " : "") + line.words[i];
    lines.push_back(std::move(line));
  }
  return lines;
}

class LineParser {
 public:
  LineParser(const std::string &source, const Line &line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string &what) const {
    throw NetworkSpecError(source_ + " line " + std::to_string(line_.number) + ": " + what);
  }

  // A whole-number word in [lo, max_size]; `what` names it in the error.
  int integer(const std::string &word, const std::string &what, long lo) const {
    bool digits = !word.empty() && word.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) fail(what + " must be a whole number, got '" + word + "' in '" + line_.text + "'");
    if (word.size() > 7 || std::stol(word) > max_size)
      fail(what + " " + word + " is too large (at most " + std::to_string(max_size) + ")");
    long value = std::stol(word);
    if (value < lo) fail(what + " must be at least " + std::to_string(lo) + ", got " + word);
    return int(value);
  }

  // Splits the words after the keyword into positional ones and key=value options, allowing
  // only the keys given.
  void split(const std::vector<std::string> &allowed_keys, std::vector<std::string> &positional,
             std::map<std::string, std::string> &options) const {
    for (size_t i = 1; i < line_.words.size(); ++i) {
      const std::string &word = line_.words[i];
      size_t eq = word.find('=');
      if (eq == std::string::npos) {
        if (!options.empty()) fail("'" + word + "' comes after an option in '" + line_.text + "'");
        positional.push_back(word);
        continue;
      }
      std::string key = word.substr(0, eq);
      bool known = false;
      for (const std::string &k : allowed_keys) known = known || k == key;
      if (!known) {
        std::string list;
        for (const std::string &k : allowed_keys) list += (list.empty() ? "" : ", ") + k + "=";
        fail("unknown option '" + word + "' for " + line_.words[0] +
             (list.empty() ? " (it takes none)" : " (it takes " + list + ")"));
      }
      if (options.count(key)) fail("option " + key + "= given twice");
      options[key] = word.substr(eq + 1);
    }
  }

  const Line &line() const { return line_; }

 private:
  const std::string &source_;
  const Line &line_;
};

bool valid_name(const std::string &name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

const char *layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::conv:
      return "conv";
    case LayerKind::relu:
      return "relu";
    case LayerKind::maxpool:
      return "maxpool";
    case LayerKind::flatten:
      return "flatten";
    case LayerKind::linear:
      return "linear";
  }
  return "?";
}

std::string to_string(const ActivationShape &shape) {
  if (shape.flat) return std::to_string(shape.c);
  return std::to_string(shape.c) + "x" + std::to_string(shape.h) + "x" + std::to_string(shape.w);
}

NetworkSpec parse_network(const std::string &text, const std::string &source) {
  NetworkSpec spec;
  spec.text = text;
  spec.source = source;
  std::vector<Line> lines = split_lines(text);
  if (lines.empty()) throw NetworkSpecError(source + ": no 'input C H W' line (the text is empty)");

  int conv_count = 0, linear_count = 0;
  std::map<std::string, int> name_lines;  // parameter names taken, and where
  ActivationShape shape;
  for (const Line &line : lines) {
    LineParser p(source, line);
    const std::string &keyword = line.words[0];
    std::vector<std::string> args;
    std::map<std::string, std::string> options;

    if (keyword == "input") {
      if (spec.input_line)
        p.fail("a second input line (the first is line " + std::to_string(spec.input_line) + ")");
      p.split({}, args, options);
      if (args.size() != 3) p.fail("input needs C H W, got '" + line.text + "'");
      shape.c = p.integer(args[0], "input C", 1);
      shape.h = p.integer(args[1], "input H", 1);
      shape.w = p.integer(args[2], "input W", 1);
      spec.input = shape;
      spec.input_line = line.number;
      continue;
    }
    if (!spec.input_line) p.fail("the first line must be 'input C H W', got '" + line.text + "'");

    LayerSpec layer;
    layer.line = line.number;
    layer.in = shape;
    if (keyword == "conv") {
      layer.kind = LayerKind::conv;
      p.split({"stride", "pad", "name"}, args, options);
      if (args.size() != 2) p.fail("conv needs OUT and K, got '" + line.text + "'");
      if (shape.flat)
        p.fail("conv needs a C x H x W input, but it is flat (" + to_string(shape) +
               " features after flatten)");
      layer.out = p.integer(args[0], "conv OUT", 1);
      layer.kernel = p.integer(args[1], "conv K", 1);
      if (options.count("stride")) layer.stride = p.integer(options["stride"], "conv stride", 1);
      if (options.count("pad")) layer.pad = p.integer(options["pad"], "conv pad", 0);
      layer.name = "conv" + std::to_string(++conv_count);
      long h = (long(shape.h) + 2L * layer.pad - layer.kernel) / layer.stride + 1;
      long w = (long(shape.w) + 2L * layer.pad - layer.kernel) / layer.stride + 1;
      if (long(shape.h) + 2L * layer.pad < layer.kernel ||
          long(shape.w) + 2L * layer.pad < layer.kernel)
        p.fail("conv kernel " + std::to_string(layer.kernel) + " with pad " +
               std::to_string(layer.pad) + " does not fit the " + to_string(shape) +
               " input (output would be empty)");
      shape = {layer.out, int(h), int(w), false};
    } else if (keyword == "relu" || keyword == "flatten") {
      layer.kind = keyword == "relu" ? LayerKind::relu : LayerKind::flatten;
      p.split({}, args, options);
      if (!args.empty()) p.fail(keyword + " takes no arguments, got '" + line.text + "'");
      if (layer.kind == LayerKind::flatten) {
        if (shape.size() > std::numeric_limits<int>::max())
          p.fail("flatten of " + to_string(shape) + " gives too many features");
        shape = {int(shape.size()), 1, 1, true};
      }
    } else if (keyword == "maxpool") {
      layer.kind = LayerKind::maxpool;
      p.split({}, args, options);
      if (args.size() != 1) p.fail("maxpool needs K (e.g. 'maxpool 2'), got '" + line.text + "'");
      if (shape.flat)
        p.fail("maxpool needs a C x H x W input, but it is flat (" + to_string(shape) +
               " features after flatten)");
      layer.kernel = p.integer(args[0], "maxpool K", 1);
      if (shape.h < layer.kernel || shape.w < layer.kernel)
        p.fail("maxpool " + std::to_string(layer.kernel) + " of the " + to_string(shape) +
               " input would be empty");
      shape = {shape.c, shape.h / layer.kernel, shape.w / layer.kernel, false};
    } else if (keyword == "linear") {
      layer.kind = LayerKind::linear;
      p.split({"name"}, args, options);
      if (args.size() != 1) p.fail("linear needs OUT, got '" + line.text + "'");
      if (!shape.flat)
        p.fail("linear needs a flat input: put 'flatten' before it (the input is " +
               to_string(shape) + ")");
      layer.out = p.integer(args[0], "linear OUT", 1);
      layer.name = "fc" + std::to_string(++linear_count);
      shape = {layer.out, 1, 1, true};
    } else {
      p.fail("unknown layer '" + keyword +
             "' (expected input, conv, relu, maxpool, flatten or linear)");
    }

    if (options.count("name")) {
      layer.name = options["name"];
      if (!valid_name(layer.name))
        p.fail("name '" + layer.name + "' is not a valid name (letters, digits, _)");
    }
    if (!layer.name.empty()) {
      auto taken = name_lines.find(layer.name);
      if (taken != name_lines.end())
        p.fail("the name " + layer.name + " is already used on line " +
               std::to_string(taken->second));
      name_lines[layer.name] = line.number;
    }
    layer.out_shape = shape;
    spec.layers.push_back(layer);
  }
  if (spec.layers.empty()) throw NetworkSpecError(source + ": the network has no layers");
  return spec;
}

NetworkSpec load_network_file(const std::string &path) {
  std::string text;
  try {
    text = read_regular_file(path, max_network_file_bytes, "a network description");
  } catch (const FileError &e) {
    throw NetworkSpecError(std::string("network file ") + e.what());
  }
  return parse_network(text, path);
}

NetworkSpec load_network(const std::string &name_or_path) {
  if (const char *text = builtin_network_text(name_or_path))
    return parse_network(text, name_or_path + ".net");
  return load_network_file(name_or_path);
}

NetworkSpec with_input_channels(const NetworkSpec &spec, int channels) {
  if (channels < 1 || channels > max_size)
    throw NetworkSpecError("input channels must be 1 to " + std::to_string(max_size) + ", got " +
                           std::to_string(channels));
  std::istringstream in(spec.text);
  std::string text, raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    if (number == spec.input_line) {
      // Keep any comment after the input line.
      size_t hash = raw.find('#');
      raw = "input " + std::to_string(channels) + " " + std::to_string(spec.input.h) + " " +
            std::to_string(spec.input.w) +
            (hash == std::string::npos ? "" : "  " + raw.substr(hash));
    }
    text += raw + "\n";
  }
  return parse_network(text, spec.source);
}

std::vector<ParameterSpec> parameter_tensors(const NetworkSpec &spec) {
  std::vector<ParameterSpec> params;
  for (const LayerSpec &layer : spec.layers) {
    if (layer.kind == LayerKind::conv) {
      params.push_back(
          {layer.name + ".weight", {layer.out, layer.in.c, layer.kernel, layer.kernel}});
    } else if (layer.kind == LayerKind::linear) {
      params.push_back({layer.name + ".weight", {layer.out, layer.in.c}});
    } else {
      continue;
    }
    params.push_back({layer.name + ".bias", {layer.out}});
  }
  return params;
}

Conv2dShape conv_shape(const LayerSpec &layer, uint32_t n) {
  return {n,
          uint32_t(layer.in.c),
          uint32_t(layer.in.h),
          uint32_t(layer.in.w),
          uint32_t(layer.out),
          uint32_t(layer.kernel),
          uint32_t(layer.stride),
          uint32_t(layer.pad)};
}

}  // namespace starcnn
