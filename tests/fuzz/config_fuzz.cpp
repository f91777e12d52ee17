// libFuzzer target: Config::parse on arbitrary bytes must return a valid Config or throw a
// netdaq::Error (ConfigError with at least one issue). Anything else escaping is a crash that
// libFuzzer reports; sanitizers catch memory and undefined-behaviour bugs on the way.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "netdaq/config.h"
#include "netdaq/status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const netdaq::Config cfg = netdaq::Config::parse(text, "fuzz.yaml");
    if (!cfg.validate().empty()) std::abort();  // parse must not return an invalid config
  } catch (const netdaq::ConfigError& e) {
    if (e.issues().empty()) std::abort();
    for (const auto& issue : e.issues()) {
      if (issue.message.empty() || issue.where.line < 0 || issue.where.column < 0) std::abort();
    }
  } catch (const netdaq::Error&) {
  }
  return 0;
}
