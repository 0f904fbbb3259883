// --math fp32|tf32, the same option on every program that runs convolutions (train, infer and
// the benchmarks): which arithmetic cuDNN may use (codelets/conv2d/conv_math.h).
#pragma once

#include "apps/cli/args.h"
#include "codelets/conv2d/conv_math.h"

#include <string>

namespace starcnn {

// Programs default to tf32, as PyTorch does for convolutions; tests ask for fp32.
constexpr const char *kDefaultProgramMath = "tf32";

// Adds --math to `args`, its value going to *math (whose value is the default shown).
void add_math_option(ArgParser &args, std::string *math);

// Makes `math` (a value --math accepted) the process's convolution math and returns it.
ConvMath apply_math_option(const std::string &math);

// What train and infer do between parsing their options and starting StarPU: apply --math and
// check StarPU's environment variables (a malformed one is a usage error naming it).
void prepare_run(const std::string &math);

}  // namespace starcnn
