// Reads a yaml-cpp node tree into plain values: maps of known keys, lists and typed scalars.
// Records where every key and list item was written and collects every problem as a
// ConfigIssue instead of stopping at the first. Internal: yaml-cpp never reaches the public
// headers.
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config_limits.h"
#include "netdaq/config.h"

namespace netdaq::detail {

// "a.b" / "b" at the top level.
std::string child_path(const std::string& path, std::string_view key);
// "a[3]"
std::string item_path(const std::string& path, size_t index);
// A yaml-cpp mark (0-based; -1 when unknown) as a 1-based SourceLocation (0 when unknown).
SourceLocation to_location(const std::string& file, const YAML::Mark& mark);

class YamlReader {
 public:
  using Visit = std::function<void(const YAML::Node& value, const std::string& path)>;
  struct Field {
    std::string_view key;
    Visit read;
  };

  // Appends to `locations` and `issues`; both must outlive the reader.
  YamlReader(std::string file, SourceMap& locations, std::vector<ConfigIssue>& issues);

  // A map with known keys: records each key's location, reports non-map values, unknown keys
  // (with a suggestion) and duplicate keys, and hands each known key's value to its Field.
  // A null value (key written without a value) counts as an empty map.
  void map(const YAML::Node& node, const std::string& path, std::span<const Field> fields);
  void map(const YAML::Node& node, const std::string& path, std::initializer_list<Field> fields) {
    map(node, path, std::span<const Field>(fields.begin(), fields.size()));
  }
  // A list: records each item's location ("path[i]") and hands it to `item`. `what` names the
  // items for the error message. Null counts as an empty list.
  void list(const YAML::Node& node, const std::string& path, std::string_view what,
            const std::function<void(const YAML::Node& item, const std::string& item_path)>& item);

  void text(const YAML::Node& node, const std::string& path, std::string& out);
  void text(const YAML::Node& node, const std::string& path, std::optional<std::string>& out);
  void boolean(const YAML::Node& node, const std::string& path, bool& out);
  // A finite number; `min` only shapes the message (the validator checks the range).
  void number(const YAML::Node& node, const std::string& path, double& out, double min);

  // An integer that fits T. `allowed` is what the message names (the validator checks it).
  template <class T>
  void integer(const YAML::Node& node, const std::string& path, T& out, Range allowed = type_range<T>()) {
    if (auto v = integer_value(node, path, type_range<T>(), allowed.describe())) out = static_cast<T>(*v);
  }
  template <class T>
  void integer(const YAML::Node& node, const std::string& path, std::optional<T>& out,
               Range allowed = type_range<T>()) {
    if (auto v = integer_value(node, path, type_range<T>(), allowed.describe())) out = static_cast<T>(*v);
  }

  // An integer, or `auto` (out = nullopt: the default is chosen where it is used).
  void integer_or_auto(const YAML::Node& node, const std::string& path, std::optional<uint32_t>& out, Range allowed);

  // One of `names`; out = E(index of the name).
  template <class E, size_t N>
  void choice(const YAML::Node& node, const std::string& path, E& out, const std::array<std::string_view, N>& names) {
    if (auto i = choice_index(node, path, names)) out = static_cast<E>(*i);
  }

  // A port (integer 0..65535) or an inclusive range written as a string "FIRST-LAST".
  void port_or_range(const YAML::Node& node, const std::string& path, std::optional<uint16_t>& first,
                     std::optional<uint16_t>& last);

  // Reports a problem with the value at `path` (at the location recorded for it).
  void error(const std::string& path, const YAML::Node& value, std::string message);
  // Key paths whose values could not be read (their fields keep the defaults).
  const std::vector<std::string>& failed() const noexcept { return failed_; }

 private:
  // The scalar's text, or nullopt after reporting that it is missing / not a scalar / quoted
  // where a plain scalar (number, boolean) is required.
  std::optional<std::string> scalar(const YAML::Node& node, const std::string& path, const std::string& allowed,
                                    bool quoted_ok);
  // The integer as int64 (or uint64 above INT64_MAX, reinterpreted) when it fits `type`; else
  // reports `message` (what is allowed).
  std::optional<uint64_t> integer_value(const YAML::Node& node, const std::string& path, Range type,
                                        const std::string& message);
  std::optional<size_t> choice_index(const YAML::Node& node, const std::string& path,
                                     std::span<const std::string_view> names);
  void record(const std::string& path, const YAML::Mark& mark);
  void error_at(const YAML::Mark& mark, const std::string& path, std::string value, std::string message);

  std::string file_;
  SourceMap& locations_;
  std::vector<ConfigIssue>& issues_;
  std::vector<std::string> failed_;
};

}  // namespace netdaq::detail
