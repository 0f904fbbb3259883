#include "apps/cli/math_option.h"

#include "model/runtime/starpu_env.h"

namespace starcnn {

void add_math_option(ArgParser &args, std::string *math) {
  args.add_choice("math", conv_math_names(),
                  "arithmetic of the CUDA convolutions: tf32 lets cuDNN use TF32 tensor cores "
                  "(PyTorch's default; about 1e-3 relative error), fp32 keeps strict FP32 (within "
                  "float rounding of the CPU kernels); the CPU computes FP32 either way",
                  math);
}

ConvMath apply_math_option(const std::string &math) {
  const std::optional<ConvMath> parsed = parse_conv_math(math);
  if (!parsed) throw UsageError("--math must be fp32 or tf32, got '" + math + "'");
  set_conv_math(*parsed);
  return *parsed;
}

void prepare_run(const std::string &math) {
  apply_math_option(math);
  usage_errors_of("environment", [] {
    check_starpu_environment();
    return 0;
  });
}

}  // namespace starcnn
