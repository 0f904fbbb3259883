// The memory a network needs at a batch size, against sums worked out by hand, and the check that
// refuses a description asking for more than the machine has before anything is allocated.
#include "model/nn/network_memory.h"

#include "model/io/regular_file.h"

#include <gtest/gtest.h>

namespace starcnn {
namespace {

// input 1x8x8 -> conv 2 3 (2x6x6) -> relu (2x6x6) -> maxpool 2 (2x3x3) -> flatten (18)
// -> linear 4 (4), then 4 probabilities.
const char *const kSmall = "input 1 8 8\nconv 2 3\nrelu\nmaxpool 2\nflatten\nlinear 4\n";

TEST(NetworkMemory, SmallNetworkByHand) {
  const NetworkSpec spec = parse_network(kSmall, "small");
  const double weights = 2 * 1 * 3 * 3 + 2 + 4 * 18 + 4;      // 96
  const double activations = 64 + 72 + 72 + 18 + 18 + 4 + 4;  // 252 per sample
  EXPECT_EQ(network_memory_bytes(spec, 1, false), 4 * (weights + activations));
  EXPECT_EQ(network_memory_bytes(spec, 10, false), 4 * (weights + 10 * activations));
  EXPECT_EQ(network_memory_bytes(spec, 10, true), 4 * (3 * weights + 2 * 10 * activations));
}

TEST(NetworkMemory, LenetFitsAnyMachine) {
  EXPECT_NO_THROW(check_network_fits_memory(load_network("lenet"), 1024, true, "batch 1024"));
}

// input 1x1024x1024 -> conv 1048576 1: 2^40 floats for one sample's output alone (4 TiB), from an
// 8 MB checkpoint.
TEST(NetworkMemory, HugeConvIsRefusedWithTheSizesAndTheLimit) {
  const NetworkSpec spec = parse_network("input 1 1024 1024\nconv 1048576 1\n", "huge.net");
  EXPECT_GT(network_memory_bytes(spec, 1, false), 2.0 * 4.0 * double(uint64_t(1) << 40));
  try {
    check_network_fits_memory(spec, 1, false, "batch 1");
    FAIL() << "no error";
  } catch (const std::invalid_argument &e) {
    const std::string message = e.what();
    for (const char *part :
         {"huge.net needs at least", "at batch 1", "half of this machine's memory"})
      EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TEST(NetworkMemory, LimitIsHalfThePhysicalMemory) {
  // A linear layer of N weights takes 4N bytes at inference: just under and just over the limit.
  const double limit = double(physical_memory_bytes()) / 2;
  const long out = long(limit / 4 / 1048576);  // fc1 [out, 1048576] is the bulk
  const std::string head = "input 1048576 1 1\nflatten\nlinear ";
  EXPECT_NO_THROW(check_network_fits_memory(parse_network(head + std::to_string(out - 4)), 1, false,
                                            "batch 1"));
  EXPECT_THROW(
      check_network_fits_memory(parse_network(head + std::to_string(out + 1)), 1, false, "batch 1"),
      std::invalid_argument);
}

}  // namespace
}  // namespace starcnn
