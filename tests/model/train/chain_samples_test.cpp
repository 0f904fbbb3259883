// The CPU chain size rule: multiply-adds counted layer by layer from the shapes written in the
// test, and the clamp to 1 .. 16 samples.
#include "model/train/chain_samples.h"

#include <gtest/gtest.h>

namespace starcnn {
namespace {

TEST(ChainSamples, CountsTheForwardMultiplyAdds) {
  const NetworkSpec spec = parse_network(
      "input 3 8 8\nconv 4 3 pad=1\nrelu\nmaxpool 2\nconv 2 3\nflatten\nlinear 5\n", "macs.net");
  // conv 3->4 3x3 pad 1: 4x8x8 outputs of 3*9 products; conv 4->2 3x3 on 4x4: 2x2x2 outputs of
  // 4*9; linear 8 -> 5.
  const int64_t want = 4 * 8 * 8 * 3 * 9 + 2 * 2 * 2 * 4 * 9 + 8 * 5;
  EXPECT_EQ(forward_macs_per_sample(spec), want);
  EXPECT_EQ(min_samples_per_cpu_chain(spec), 16u);  // tiny: the cap
}

TEST(ChainSamples, LenetGetsChainsOfEightAndWideOfOne) {
  // lenet on 3x32x32: conv1 6x28x28x(3*25), conv2 16x10x10x(6*25), fc 400*120 + 120*84 + 84*10.
  const int64_t lenet =
      6 * 28 * 28 * 3 * 25 + 16 * 10 * 10 * 6 * 25 + 400 * 120 + 120 * 84 + 84 * 10;
  const NetworkSpec spec = with_input_channels(load_network("lenet"), 3);
  EXPECT_EQ(forward_macs_per_sample(spec), lenet);
  EXPECT_EQ(min_samples_per_cpu_chain(spec), size_t((kCpuChainMacs + lenet - 1) / lenet));
  EXPECT_EQ(min_samples_per_cpu_chain(spec), 8u);
  EXPECT_EQ(min_samples_per_cpu_chain(load_network("wide")), 1u);
}

}  // namespace
}  // namespace starcnn
