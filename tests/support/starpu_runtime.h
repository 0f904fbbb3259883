// Starts StarPU for one test with a chosen scheduler and stops it afterwards: the programs' own
// Runtime (model/runtime/runtime.h) with the test's policy and CUDA worker count.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/runtime/runtime.h"

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

class StarpuRuntime : public Runtime {
 public:
  // `sched` overrides STARPU_SCHED for this runtime; ncuda < 0 takes every CUDA device.
  explicit StarpuRuntime(const std::string &sched, int ncuda = -1)
      : Runtime(RuntimeOptions{"", sched, ncuda}) {}
  std::string policy_name() const { return scheduler(); }
  bool started() const { return true; }  // the constructor throws otherwise
};

}  // namespace starcnn::testing
