// Starts StarPU for one test with a chosen scheduler and stops it afterwards.
#pragma once

#include <gtest/gtest.h>
#include <starpu.h>

#include <string>
#include <vector>

namespace starcnn::testing {

// The schedulers every codelet test runs under.
inline const std::vector<std::string> &test_schedulers() {
  static const std::vector<std::string> names = {"eager", "lws", "dmda", "dmdas"};
  return names;
}

// Names parameterised test cases after their scheduler.
inline std::string scheduler_test_name(const ::testing::TestParamInfo<std::string> &param) {
  return param.param;
}

class StarpuRuntime {
 public:
  // `sched` overrides STARPU_SCHED for this runtime; ncuda < 0 takes every CUDA device.
  explicit StarpuRuntime(const std::string &sched, int ncuda = -1);
  ~StarpuRuntime();
  StarpuRuntime(const StarpuRuntime &) = delete;
  StarpuRuntime &operator=(const StarpuRuntime &) = delete;

  bool started() const { return started_; }
  std::string policy_name() const;

 private:
  bool started_ = false;
};

}  // namespace starcnn::testing
