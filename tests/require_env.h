// The variables that turn a skip into a failure, read one way in every test binary:
// CI=true (a missing root, tool or kernel piece fails), NETDAQ_REQUIRE_GPU=1 (set by
// scripts/gpu-check.sh: a GPU test without a usable GPU fails), NETDAQ_REQUIRE_TAP_FLOWS=1
// (set in the QEMU guest: net_tap flows must steer).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string_view>

namespace ndqtest {

// Whether the variable `name` is set to one of `values`.
inline bool env_is(const char* name, std::initializer_list<std::string_view> values = {"1"}) {
  const char* v = std::getenv(name);
  if (!v) return false;
  for (std::string_view want : values)
    if (want == v) return true;
  return false;
}

inline bool gpu_required() { return env_is("NETDAQ_REQUIRE_GPU"); }

// CI=true in the environment.
inline bool in_ci() { return env_is("CI", {"true", "1"}); }
// Outside CI a test may skip when it lacks root or a tool; in CI it must fail instead (gtest).
#define NDQ_REQUIRE(cond, why)                                                         \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      if (::ndqtest::in_ci()) FAIL() << (why) << " (CI=true: this test must not skip)"; \
      GTEST_SKIP() << (why);                                                           \
    }                                                                                  \
  } while (0)

}  // namespace ndqtest
