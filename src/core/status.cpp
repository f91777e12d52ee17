#include "netdaq/status.h"

#include "util/errno_text.h"

namespace netdaq {

std::string ConfigIssue::to_string() const {
  std::string s = where.file.empty() ? "<c++>" : where.file;
  if (where.line > 0) s += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
  s += ": ";
  if (!key.empty()) {
    s += key;
    if (!value.empty()) s += " = '" + value + "'";
    s += ": ";
  }
  s += message;
  return s;
}

static std::string join_issues(const std::vector<ConfigIssue>& issues) {
  std::string s = "invalid configuration (" + std::to_string(issues.size()) +
                  (issues.size() == 1 ? " error)" : " errors)");
  for (const auto& i : issues) s += "\n  " + i.to_string();
  return s;
}

ConfigError::ConfigError(std::vector<ConfigIssue> issues)
    : Error(Errc::invalid_config, join_issues(issues)), issues_(std::move(issues)) {}

void throw_system_error(const std::string& what, int err) {
  throw Error(Errc::system, what + ": " + detail::errno_text(err));
}

}  // namespace netdaq
