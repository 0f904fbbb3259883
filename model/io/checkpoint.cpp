#include "model/io/checkpoint.h"

#include "model/io/json.h"

#include <algorithm>
#include <cmath>

namespace starcnn {

namespace {

const char *const format_value = "starcnn-checkpoint 1";

[[noreturn]] void fail(const std::string &source, const std::string &what) {
  throw SafetensorsError("checkpoint " + source + ": " + what);
}

const std::string &metadata(const TensorFile &file, const std::string &key,
                            const std::string &source) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) fail(source, "metadata has no \"" + key + "\"");
  return it->second;
}

int64_t metadata_integer(const TensorFile &file, const std::string &key,
                         const std::string &source) {
  const std::string &text = metadata(file, key, source);
  bool digits = !text.empty() && text.size() <= 18 &&
                text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) fail(source, "metadata \"" + key + "\" must be a whole number, got '" + text + "'");
  return std::stoll(text);
}

std::vector<float> float_array(const json::Value *value, const std::string &what) {
  if (!value) throw json::ParseError("no \"" + what + "\"");
  if (value->kind != json::Kind::array)
    throw json::ParseError("\"" + what + "\" must be an array of numbers");
  std::vector<float> out;
  for (const json::Value &item : value->items) {
    double x = json::to_double(item, what + " value");
    if (std::fabs(x) > 3.0e38)
      throw json::ParseError(what + " value " + item.text + " is too large");
    out.push_back(float(x));
  }
  return out;
}

// The tensors of `want` must be exactly those of `have`, by name and shape; `what` prefixes the
// names in errors.
void check_tensors(const std::vector<NamedTensor> &have, const std::vector<ParameterSpec> &want,
                   const std::string &prefix, const std::string &source) {
  for (const ParameterSpec &p : want) {
    const NamedTensor *found = nullptr;
    for (const NamedTensor &t : have)
      if (t.name == p.name) found = &t;
    if (!found)
      fail(source,
           prefix + p.name + " is missing (the network needs " + shape_string(p.shape) + ")");
    if (found->shape != p.shape)
      fail(source, prefix + p.name + " has shape " + shape_string(found->shape) +
                       ", the network needs " + shape_string(p.shape));
    if (found->values.size() != element_count(p.shape))
      fail(source, prefix + p.name + " has " + std::to_string(found->values.size()) +
                       " values for shape " + shape_string(p.shape));
  }
  for (const NamedTensor &t : have) {
    bool expected = false;
    for (const ParameterSpec &p : want) expected = expected || p.name == t.name;
    if (!expected) fail(source, "unexpected tensor " + prefix + t.name + " (not in the network)");
  }
}

}  // namespace

std::string preprocess_to_json(const Preprocess &preprocess) {
  auto array = [](const std::vector<float> &values) {
    json::Array out;
    for (float x : values) out.raw(json::format_float(x));
    return out;
  };
  return json::Object()
      .integer("pad", preprocess.pad)
      .array("mean", array(preprocess.mean))
      .array("std", array(preprocess.stddev))
      .text();
}

Preprocess preprocess_from_json(const std::string &text, const std::string &source) {
  try {
    json::Value value = json::parse(text);
    if (value.kind != json::Kind::object) throw json::ParseError("it is not a JSON object");
    Preprocess p;
    const json::Value *pad = value.find("pad");
    if (!pad) throw json::ParseError("no \"pad\"");
    uint64_t pad_value = json::to_uint(*pad, "pad");
    if (pad_value > 1024) throw json::ParseError("pad " + pad->text + " is too large");
    p.pad = int(pad_value);
    p.mean = float_array(value.find("mean"), "mean");
    p.stddev = float_array(value.find("std"), "std");
    if (p.mean.size() != p.stddev.size())
      throw json::ParseError("mean has " + std::to_string(p.mean.size()) + " values but std has " +
                             std::to_string(p.stddev.size()));
    for (float s : p.stddev)
      if (!(s > 0)) throw json::ParseError("std values must be positive");
    return p;
  } catch (const json::ParseError &e) {
    throw SafetensorsError(source + ": bad preprocess metadata: " + e.what());
  }
}

std::string first_non_finite(const std::vector<NamedTensor> &tensors) {
  for (const NamedTensor &t : tensors)
    for (size_t i = 0; i < t.values.size(); ++i)
      if (!std::isfinite(t.values[i]))
        return t.name + "[" + std::to_string(i) + "] is " +
               (std::isnan(t.values[i]) ? "nan" : "inf");
  return "";
}

void save_checkpoint(const std::string &path, const Checkpoint &checkpoint) {
  for (const auto *tensors : {&checkpoint.parameters, &checkpoint.momentum}) {
    const std::string bad = first_non_finite(*tensors);
    if (!bad.empty())
      fail(path, "not written: " + std::string(tensors == &checkpoint.momentum ? "momentum " : "") +
                     bad + " (the weights are no longer finite)");
  }
  if (!checkpoint.momentum.empty() && checkpoint.momentum.size() != checkpoint.parameters.size())
    throw SafetensorsError("checkpoint " + path + ": " +
                           std::to_string(checkpoint.momentum.size()) + " momentum buffers for " +
                           std::to_string(checkpoint.parameters.size()) + " parameters");
  TensorFile file;
  file.tensors = checkpoint.parameters;
  for (const NamedTensor &m : checkpoint.momentum) {
    file.tensors.push_back(m);
    file.tensors.back().name = momentum_prefix + m.name;
  }
  file.metadata["format"] = format_value;
  file.metadata["network"] = checkpoint.network;
  file.metadata["preprocess"] = preprocess_to_json(checkpoint.preprocess);
  file.metadata["step"] = std::to_string(checkpoint.step);
  file.metadata["epoch"] = std::to_string(checkpoint.epoch);
  if (!checkpoint.math.empty()) file.metadata["math"] = checkpoint.math;
  write_safetensors(path, file);
}

Checkpoint read_checkpoint(const std::string &path) {
  TensorFile file = read_safetensors(path);
  const std::string &format = metadata(file, "format", path);
  if (format != format_value)
    fail(path, "metadata \"format\" is '" + format + "', expected '" + format_value + "'");
  Checkpoint checkpoint;
  checkpoint.network = metadata(file, "network", path);
  checkpoint.preprocess =
      preprocess_from_json(metadata(file, "preprocess", path), "checkpoint " + path);
  checkpoint.step = metadata_integer(file, "step", path);
  checkpoint.epoch = metadata_integer(file, "epoch", path);
  // Informative only (nothing depends on it), and absent from older checkpoints.
  const auto math = file.metadata.find("math");
  if (math != file.metadata.end()) checkpoint.math = math->second;
  const std::string bad = first_non_finite(file.tensors);
  if (!bad.empty()) fail(path, "tensor " + bad + ": a checkpoint must hold finite numbers only");
  const std::string prefix = momentum_prefix;
  for (NamedTensor &t : file.tensors) {
    if (t.name.compare(0, prefix.size(), prefix) == 0) {
      t.name.erase(0, prefix.size());
      checkpoint.momentum.push_back(std::move(t));
    } else {
      checkpoint.parameters.push_back(std::move(t));
    }
  }
  return checkpoint;
}

void check_checkpoint(const Checkpoint &checkpoint, const NetworkSpec &spec,
                      const std::string &source) {
  std::vector<ParameterSpec> want = parameter_tensors(spec);
  check_tensors(checkpoint.parameters, want, "", source);
  if (!checkpoint.momentum.empty())
    check_tensors(checkpoint.momentum, want, momentum_prefix, source);
}

Checkpoint load_checkpoint(const std::string &path, const NetworkSpec &spec) {
  Checkpoint checkpoint = read_checkpoint(path);
  check_checkpoint(checkpoint, spec, path);
  // Keep the network's order whatever order the file had.
  std::vector<ParameterSpec> want = parameter_tensors(spec);
  auto reorder = [&](std::vector<NamedTensor> &tensors) {
    if (tensors.empty()) return;
    std::vector<NamedTensor> ordered;
    for (const ParameterSpec &p : want)
      for (NamedTensor &t : tensors)
        if (t.name == p.name) ordered.push_back(std::move(t));
    tensors = std::move(ordered);
  };
  reorder(checkpoint.parameters);
  reorder(checkpoint.momentum);
  return checkpoint;
}

namespace {

// "conv 6 5 stride=1 pad=0 name=conv1 -> 6x28x28": what a layer is, whatever the text's spacing,
// comments or defaults.
std::string layer_signature(const LayerSpec &layer) {
  return std::string(layer_kind_name(layer.kind)) + " " + std::to_string(layer.out) + " " +
         std::to_string(layer.kernel) + " stride=" + std::to_string(layer.stride) +
         " pad=" + std::to_string(layer.pad) + (layer.name.empty() ? "" : " name=" + layer.name) +
         " -> " + to_string(layer.out_shape);
}

}  // namespace

void check_same_run(const Checkpoint &checkpoint, const NetworkSpec &spec,
                    const Preprocess &preprocess, const std::string &source) {
  NetworkSpec saved;
  try {
    saved = parse_network(checkpoint.network, source + " (network)");
  } catch (const NetworkSpecError &e) {
    fail(source, e.what());
  }
  if (to_string(saved.input) != to_string(spec.input))
    fail(source, "its network takes " + to_string(saved.input) + " inputs, " + spec.source +
                     " takes " + to_string(spec.input));
  const size_t layers = std::max(saved.layers.size(), spec.layers.size());
  for (size_t i = 0; i < layers; ++i) {
    const std::string a = i < saved.layers.size() ? layer_signature(saved.layers[i]) : "nothing";
    const std::string b = i < spec.layers.size() ? layer_signature(spec.layers[i]) : "nothing";
    if (a != b)
      fail(source, "layer " + std::to_string(i + 1) + " of its network is '" + a + "', in " +
                       spec.source + " it is '" + b + "'");
  }
  const std::string saved_pre = preprocess_to_json(checkpoint.preprocess);
  const std::string run_pre = preprocess_to_json(preprocess);
  if (saved_pre != run_pre)
    fail(source,
         "it was trained with preprocessing " + saved_pre + ", this run's data set has " + run_pre);
}

}  // namespace starcnn
