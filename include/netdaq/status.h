// Error types. Setup code throws these; the hot path never throws (an empty burst or a
// count of packets taken, and a drop reason in the queue's stats).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace netdaq {

enum class Errc : uint8_t {
  invalid_config,
  not_found,       // interface, queue, region or engine does not exist
  unsupported,     // engine or feature not built in / not available on this system
  resource,        // memory, hugepages, file descriptors
  system,          // an OS call failed (errno in the message)
  state,           // called in the wrong state (e.g. start twice)
};

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

// Where a config value came from. line/column are 1-based; 0 when the Config was built in C++.
struct SourceLocation {
  std::string file;  // "<c++>" for a Config built in code
  int line = 0;
  int column = 0;
};

// One problem found while loading or validating a configuration.
struct ConfigIssue {
  SourceLocation where;
  std::string key;      // key path, e.g. "interfaces[0].rx.queues[1].batch_size"
  std::string value;    // the offending value as written ("" if missing)
  std::string message;  // what is wrong and what is allowed
  std::string to_string() const;  // "file:line:col: key = value: message"
};

// Thrown by Config::load / Config::validate_or_throw / Session with every issue found.
class ConfigError : public Error {
 public:
  explicit ConfigError(std::vector<ConfigIssue> issues);
  const std::vector<ConfigIssue>& issues() const noexcept { return issues_; }

 private:
  std::vector<ConfigIssue> issues_;
};

// Throws Error(Errc::system) with "<what>: <strerror(err)>".
[[noreturn]] void throw_system_error(const std::string& what, int err);

}  // namespace netdaq
