// The arithmetic the CUDA convolutions may use, one setting for the whole process: strict FP32
// (fp32: FMA math, results within float rounding of the CPU kernels) or TF32 tensor cores (tf32:
// PyTorch's default for convolutions, faster, about 1e-3 relative error). The CPU kernels are
// FP32 either way. Programs set it from --math; tests keep the default, fp32.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace starcnn {

enum class ConvMath { fp32, tf32 };

// Set it before convolutions are prepared (prepare_conv2d): a shape already prepared on a CUDA
// worker keeps the math it was prepared with until StarPU restarts.
void set_conv_math(ConvMath math);
ConvMath conv_math();

// "fp32" or "tf32", the names --math takes and the JSON lines record.
const char *to_string(ConvMath math);
std::optional<ConvMath> parse_conv_math(const std::string &name);
std::vector<std::string> conv_math_names();

}  // namespace starcnn
