#include "codelets/conv2d/conv_math.h"

#include <atomic>

namespace starcnn {
namespace {

// Read by each CUDA worker when it prepares a shape.
std::atomic<ConvMath> process_math{ConvMath::fp32};

}  // namespace

void set_conv_math(ConvMath math) {
  process_math.store(math);
}

ConvMath conv_math() {
  return process_math.load();
}

const char *to_string(ConvMath math) {
  return math == ConvMath::tf32 ? "tf32" : "fp32";
}

std::optional<ConvMath> parse_conv_math(const std::string &name) {
  for (ConvMath math : {ConvMath::fp32, ConvMath::tf32})
    if (name == to_string(math)) return math;
  return std::nullopt;
}

std::vector<std::string> conv_math_names() {
  return {"fp32", "tf32"};
}

}  // namespace starcnn
