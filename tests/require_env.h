// The variables that turn a skip into a failure, read one way in every test binary:
// CI=true (in_ci(): a missing root, tool or kernel piece fails), NETDAQ_REQUIRE_GPU=1 (set by
// scripts/gpu-check.sh: a GPU test without a usable GPU fails), NETDAQ_REQUIRE_TAP_FLOWS=1
// (set in the QEMU guest: net_tap flows must steer).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string>
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

// The CI rule of scripts/lib/ci.sh, read the same way here: CI is "true", "1" or "yes", any case.
inline bool in_ci() {
  const char* v = std::getenv("CI");
  if (!v) return false;
  std::string lower(v);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower == "true" || lower == "1" || lower == "yes";
}
// Outside CI a test may skip when it lacks root or a tool; in CI it must fail instead (gtest).
#define NDQ_REQUIRE(cond, why)                                                         \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      if (::ndqtest::in_ci()) FAIL() << (why) << " (CI=true: this test must not skip)"; \
      GTEST_SKIP() << (why);                                                           \
    }                                                                                  \
  } while (0)

// Whether `name` is a program on the PATH (a test's peer tool).
inline bool have_tool(const std::string& name) {
  const std::string cmd = "command -v '" + name + "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}
#define NDQ_REQUIRE_TOOL(tool, package) \
  NDQ_REQUIRE(::ndqtest::have_tool(tool), std::string(tool) + " is not installed (apt-get install " package ")")

}  // namespace ndqtest
