// PLACEHOLDER: replaced by the validator.
#include "netdaq/config.h"
namespace netdaq {
std::vector<ConfigIssue> Config::validate() const { return {}; }
void Config::validate_or_throw() const {
  auto issues = validate();
  if (!issues.empty()) throw ConfigError(std::move(issues));
}
}  // namespace netdaq
