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

}  // namespace ndqtest
