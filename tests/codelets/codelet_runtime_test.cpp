// cuda_devices_for_starpu(), read before StarPU starts, must agree with the CUDA workers StarPU
// then finds (here none, on the GPU machine some), and STARPU_NCUDA=0 must mean none.
#include "codelets/support/codelet_runtime.h"

#include "tests/support/starpu_runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace starcnn {
namespace {

TEST(CodeletRuntime, CudaDevicesAgreeWithStarpusCudaWorkers) {
  unsetenv("STARPU_NCUDA");
  const int devices = cuda_devices_for_starpu();
  testing::StarpuRuntime runtime("eager");
  ASSERT_TRUE(runtime.started());
  EXPECT_EQ(devices > 0, starpu_cuda_worker_get_count() > 0) << devices << " devices";
}

TEST(CodeletRuntime, NcudaZeroMeansNoDevices) {
  setenv("STARPU_NCUDA", "0", 1);
  EXPECT_EQ(cuda_devices_for_starpu(), 0);
  unsetenv("STARPU_NCUDA");
}

}  // namespace
}  // namespace starcnn
