// Helpers shared by the config tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/engine.h"
#include "netdaq/config.h"
#include "netdaq/engines/afxdp.h"
#include "netdaq/engines/dpdk.h"
#include "netdaq/engines/socket.h"
#include "netdaq/status.h"
#include "test_paths.h"

namespace netdaq::test {

// A YAML template with its first `placeholder` (a line such as REORDER) replaced by `text`.
inline std::string fill_in(std::string yaml, const std::string& placeholder, const std::string& text) {
  yaml.replace(yaml.find(placeholder), placeholder.size(), text);
  return yaml;
}

// A config of one rx queue on region `pay` (2048 x 8192 buffers of `region`: "kind: host", or
// "kind: pinned, gpu: 0") whose rx.reorder[0] is `- queue: 0` (line 10; line 1 is empty, as
// in a raw string that starts with a newline) followed by `reorder` (key lines, indented 10).
inline std::string reorder_yaml(const std::string& reorder, const std::string& region = "kind: host",
                                int port = 5004) {
  return "\nmemory_regions:\n  - {name: pay, " + region +
         ", buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n  - name: in\n    address: udp://127.0.0.1:" + std::to_string(port) +
         "\n    rx:\n      queues: [{id: 0, batch_size: 64, memory_regions: [pay]}]\n"
         "      reorder:\n        - queue: 0\n" + reorder + "\n";
}

inline std::string config_data(const std::string& name) {
  return std::string(NETDAQ_SOURCE_DIR) + "/tests/data/config/" + name;
}

// Registers a stand-in engine under `name` unless one is registered: the validator accepts
// only engines built into the binary. Never used to open queues.
inline void ensure_engine(const std::string& name) {
  if (detail::find_engine(name)) return;
  detail::register_engine(name, [](const Config&, const InterfaceConfig&) -> std::unique_ptr<detail::Engine> {
    throw Error(Errc::unsupported, "config tests' stand-in engine");
  });
}

// Until the socket engine registers itself, configs that name it need the stand-in.
inline void ensure_socket_engine() { ensure_engine("socket"); }

// The issues a ConfigError carries (fails the test if `fn` does not throw one).
template <class Fn>
std::vector<ConfigIssue> issues_of(Fn&& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.issues();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return {};
}

inline std::vector<ConfigIssue> parse_issues(const std::string& yaml, const std::string& source = "test.yaml") {
  return issues_of([&] { Config::parse(yaml, source); });
}

// The issue about `key`, or nullptr.
inline const ConfigIssue* find_issue(const std::vector<ConfigIssue>& issues, const std::string& key) {
  auto it = std::find_if(issues.begin(), issues.end(), [&](const ConfigIssue& i) { return i.key == key; });
  return it == issues.end() ? nullptr : &*it;
}

// Checks one issue: location, key, value and a piece of its message.
inline void expect_issue(const std::vector<ConfigIssue>& issues, const std::string& file, int line, int column,
                         const std::string& key, const std::string& value, const std::string& message_part) {
  const ConfigIssue* i = find_issue(issues, key);
  ASSERT_NE(i, nullptr) << "no issue for " << key;
  EXPECT_EQ(i->where.file, file) << key;
  EXPECT_EQ(i->where.line, line) << key;
  EXPECT_EQ(i->where.column, column) << key;
  EXPECT_EQ(i->value, value) << key;
  EXPECT_NE(i->message.find(message_part), std::string::npos) << key << ": " << i->message;
}

// The only issue of a config built in C++ (no file location), which must be about `key`
// with `value` and say `message_part`.
inline void expect_only(const Config& c, const std::string& key, const std::string& value,
                        const std::string& message_part) {
  const auto issues = c.validate();
  ASSERT_EQ(issues.size(), 1u) << (issues.empty() ? "no issues" : issues[0].to_string());
  expect_issue(issues, "<c++>", 0, 0, key, value, message_part);
}

}  // namespace netdaq::test
