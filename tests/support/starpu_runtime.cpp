#include "tests/support/starpu_runtime.h"

#include "codelets/codelet_runtime.h"

#include <cstdlib>
#include <stdexcept>

namespace starcnn::testing {

StarpuRuntime::StarpuRuntime(const std::string &sched, int ncuda) {
  // STARPU_SCHED wins over starpu_conf in StarPU, so the test's choice is made through it.
  setenv("STARPU_SCHED", sched.c_str(), 1);
  set_starpu_defaults();
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncuda = ncuda;
  conf.nopencl = 0;
  const int ret = starpu_init(&conf);
  if (ret != 0) throw std::runtime_error("starpu_init failed for scheduler " + sched);
  started_ = true;
  start_codelet_resources();
}

StarpuRuntime::~StarpuRuntime() {
  if (started_) {
    starpu_task_wait_for_all();
    stop_codelet_resources();
    starpu_shutdown();
  }
}

std::string StarpuRuntime::policy_name() const {
  const starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(0);
  return policy && policy->policy_name ? policy->policy_name : "";
}

}  // namespace starcnn::testing
