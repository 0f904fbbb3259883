// StarPU's environment is checked before StarPU starts: malformed worker counts and unknown
// scheduling policies are errors naming the variable (StarPU itself aborts on STARPU_NCPU=abc).
#include "model/runtime/starpu_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace starcnn {
namespace {

// Sets a variable for the test's duration and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char *name_;
  std::optional<std::string> old_;
};

std::string error_of() {
  try {
    check_starpu_environment();
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

TEST(StarpuEnv, MalformedWorkerCountsNameTheVariable) {
  for (const char *name : {"STARPU_NCPU", "STARPU_NCUDA"}) {
    for (const char *bad : {"abc", "", "1.5", "2x", "-2", "99999999", " 2", "0x10"}) {
      ScopedEnv env(name, bad);
      const std::string message = error_of();
      EXPECT_NE(message.find(std::string(name) + " must be a whole number"), std::string::npos)
          << name << "='" << bad << "': " << message;
      EXPECT_NE(message.find("'" + std::string(bad) + "'"), std::string::npos) << message;
    }
    for (const char *good : {"0", "1", "-1", "16"}) {
      ScopedEnv env(name, good);
      EXPECT_EQ(error_of(), "") << name << "=" << good;
    }
  }
}

TEST(StarpuEnv, UnknownPolicyListsStarpusPolicies) {
  {
    ScopedEnv env("STARPU_SCHED", "dmdaz");
    const std::string message = error_of();
    EXPECT_NE(message.find("STARPU_SCHED 'dmdaz' is not a scheduling policy of StarPU 1.3"),
              std::string::npos)
        << message;
    // Policies StarPU 1.3.10 documents, each a whole item of the list.
    const std::string list = message.substr(message.find("offers: ") + 7) + ",";
    for (const char *policy : {"eager", "lws", "ws", "dmda", "dmdas", "random", "modular-heft"})
      EXPECT_NE(list.find(std::string(" ") + policy + ","), std::string::npos)
          << policy << ": " << message;
  }
  for (const char *policy : {"eager", "lws", "dmda", "dmdas", "modular-heft"}) {
    ScopedEnv env("STARPU_SCHED", policy);
    EXPECT_EQ(error_of(), "") << policy;
  }
}

}  // namespace
}  // namespace starcnn
