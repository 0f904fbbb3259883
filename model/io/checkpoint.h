// Training checkpoints as one safetensors file that PyTorch can load:
//   tensors   the parameters under their state_dict names (conv1.weight, ..., fc3.bias), in
//             state_dict order, then, when saved, the SGD momentum buffers of the same shapes
//             as "optimizer.momentum.<parameter name>" (a PyTorch model.load_state_dict skips
//             them once filtered by the prefix; they are all there or none are)
//   metadata  "format": "starcnn-checkpoint 1"
//             "network": the network description's text
//             "preprocess": a JSON object, {"pad": 2, "mean": [...], "std": [...]}
//             "step", "epoch": decimal integers
//             "math": the CUDA convolutions' arithmetic of the run that saved it, "fp32" or
//             "tf32" (train --math); absent in checkpoints saved before it was recorded
#pragma once

#include "model/io/safetensors.h"
#include "model/nn/network_spec.h"

#include "model/data/preprocess.h"

#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

constexpr const char *momentum_prefix = "optimizer.momentum.";

std::string preprocess_to_json(const Preprocess &preprocess);
// `source` names the text in errors.
Preprocess preprocess_from_json(const std::string &text, const std::string &source);

struct Checkpoint {
  std::string network;  // the description's text
  Preprocess preprocess;
  int64_t step = 0, epoch = 0;
  std::string math;  // "fp32", "tf32", or "" (not recorded: nothing written, nothing read)
  std::vector<NamedTensor> parameters;  // state_dict names and order
  std::vector<NamedTensor> momentum;    // same names as parameters, or empty
};

// "conv1.weight[12] is nan" for the first value of the tensors that is NaN or infinite, or "".
std::string first_non_finite(const std::vector<NamedTensor> &tensors);

// Writes atomically (see write_safetensors); refuses (SafetensorsError, nothing written) when a
// value is NaN or infinite, so a checkpoint never holds one.
void save_checkpoint(const std::string &path, const Checkpoint &checkpoint);
// Reads without checking the tensors against a network (the network text is inside); refuses a
// file whose tensors hold a NaN or infinite value.
Checkpoint read_checkpoint(const std::string &path);
// Reads and checks that every parameter of `spec` (and momentum, when present) is there with the
// right shape and nothing else is; errors name the file and the first mismatch.
Checkpoint load_checkpoint(const std::string &path, const NetworkSpec &spec);
// The same check on a checkpoint in memory; `source` names it in errors.
void check_checkpoint(const Checkpoint &checkpoint, const NetworkSpec &spec,
                      const std::string &source);

// Refuses to resume `checkpoint` into a run of another network or preprocessing: the layers
// (kinds, sizes, names) of its network text and `spec` must agree, and its preprocessing must be
// `preprocess`. Errors name `source` and the first difference.
void check_same_run(const Checkpoint &checkpoint, const NetworkSpec &spec,
                    const Preprocess &preprocess, const std::string &source);

}  // namespace starcnn
