// --math sets the process's convolution math (codelets/conv2d/conv_math.h), whose names are the
// ones the JSON lines and checkpoints record; tests run with fp32, the setting's default.
#include "apps/cli/math_option.h"

#include <gtest/gtest.h>

namespace starcnn {
namespace {

TEST(MathOption, SetsTheProcessConvolutionMath) {
  EXPECT_EQ(conv_math(), ConvMath::fp32);  // what every other test computes with
  EXPECT_EQ(apply_math_option("tf32"), ConvMath::tf32);
  EXPECT_EQ(conv_math(), ConvMath::tf32);
  EXPECT_EQ(apply_math_option("fp32"), ConvMath::fp32);
  EXPECT_EQ(conv_math(), ConvMath::fp32);
  EXPECT_THROW(apply_math_option("TF32"), UsageError);
  EXPECT_EQ(conv_math(), ConvMath::fp32);
  EXPECT_EQ(std::string(kDefaultProgramMath), "tf32");
}

TEST(MathOption, NamesRoundTrip) {
  EXPECT_EQ(conv_math_names(), (std::vector<std::string>{"fp32", "tf32"}));
  for (const std::string &name : conv_math_names()) {
    const std::optional<ConvMath> math = parse_conv_math(name);
    ASSERT_TRUE(math.has_value()) << name;
    EXPECT_EQ(to_string(*math), name);
  }
  EXPECT_FALSE(parse_conv_math("fp16").has_value());
  EXPECT_FALSE(parse_conv_math("").has_value());
}

}  // namespace
}  // namespace starcnn
