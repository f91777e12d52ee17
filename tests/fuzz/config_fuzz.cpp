// libFuzzer target: Config::parse on arbitrary bytes must either return a Config that
// validates or throw a netdaq::ConfigError holding at least one well-formed issue. Any other
// exception (a plain netdaq::Error, a yaml-cpp exception, std::out_of_range, ...) is not caught
// here: it escapes, std::terminate aborts, and libFuzzer reports the input as a crash. The
// sanitizers (ASan, UBSan) catch memory and undefined-behaviour bugs on the way.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "netdaq/config.h"
#include "netdaq/status.h"
#include "run_block.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "config_fuzz: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

}  // namespace

// The seeds (examples, tests/data/config) hold the CLI's `run:` block: read it as `netdaq`
// does, so the application-block reader is fuzzed too.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  netdaq::cli::register_run_block();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const netdaq::Config cfg = netdaq::Config::parse(text, "fuzz.yaml");
    const auto issues = cfg.validate();
    if (!issues.empty()) fail("parse returned a config that does not validate", issues.front().to_string());
  } catch (const netdaq::ConfigError& e) {
    if (e.issues().empty()) fail("ConfigError without issues", e.what());
    for (const auto& issue : e.issues()) {
      if (issue.message.empty()) fail("issue without a message", issue.to_string());
      if (issue.where.line < 0 || issue.where.column < 0)
        fail("issue with a negative line or column", issue.to_string());
    }
  }
  return 0;
}
