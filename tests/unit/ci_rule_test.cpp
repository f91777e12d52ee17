// The C++ tests read CI as the scripts do (scripts/lib/ci.sh): asked in this process's
// environment, both answer the same. tests/requirements/ci_rule_test.sh runs this test under
// many values of CI and compares the printed answer with Python's and CMake's.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../require_env.h"
#include "test_paths.h"

TEST(CiRule, Reports) {
  const std::string cmd =
      std::string("bash -c '. \"") + netdaq::test::source_dir() + "/scripts/lib/ci.sh\" && netdaq_in_ci'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << cmd;
  const bool shell = WEXITSTATUS(status) == 0;
  std::printf("ci rule: %s\n", ndqtest::in_ci() ? "on" : "off");
  const char* v = std::getenv("CI");
  EXPECT_EQ(ndqtest::in_ci(), shell) << "CI='" << (v ? v : "(unset)") << "': C++ and scripts/lib/ci.sh disagree";
}
