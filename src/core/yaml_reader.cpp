#include "core/yaml_reader.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "core/config_check.h"
#include "core/config_suggest.h"

namespace netdaq::detail {

namespace {

std::string value_text(const YAML::Node& n) { return n.IsScalar() ? shorten(n.Scalar()) : std::string(); }

// A quoted scalar ('x', "x") or one tagged !!str is a string, never a number or boolean.
bool is_quoted(const YAML::Node& n) { return n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str"; }

struct ParsedInt {
  bool negative = false;
  bool overflow = false;
  uint64_t magnitude = 0;
};

// Decimal or 0x-hexadecimal, with an optional sign.
std::optional<ParsedInt> parse_int(std::string_view s) {
  ParsedInt r;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    r.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), r.magnitude, base);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) r.overflow = true;
  else if (ec != std::errc()) return std::nullopt;
  return r;
}

bool fits(const ParsedInt& v, Range type) {
  if (v.overflow) return false;
  if (!v.negative || v.magnitude == 0) return v.magnitude <= type.max;
  if (type.min >= 0) return false;
  const uint64_t most_negative = static_cast<uint64_t>(-(type.min + 1)) + 1;
  return v.magnitude <= most_negative;
}

std::optional<bool> parse_bool(std::string_view s) {
  for (auto t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
    if (s == t) return true;
  for (auto f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})
    if (s == f) return false;
  return std::nullopt;
}

std::optional<double> parse_double(std::string_view s) {
  if (s.starts_with('+')) s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item_path(const std::string& path, size_t index) { return path + "[" + std::to_string(index) + "]"; }

SourceLocation to_location(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return SourceLocation{file, 0, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

YamlReader::YamlReader(std::string file, SourceMap& locations, std::vector<ConfigIssue>& issues)
    : file_(std::move(file)), locations_(locations), issues_(issues) {}

void YamlReader::record(const std::string& path, const YAML::Mark& mark) {
  locations_.emplace(path, to_location(file_, mark));
}

void YamlReader::error_at(const YAML::Mark& mark, const std::string& path, std::string value, std::string message) {
  issues_.push_back(ConfigIssue{to_location(file_, mark), path, shorten(std::move(value)), std::move(message)});
}

void YamlReader::error(const std::string& path, const YAML::Node& value, std::string message) {
  auto it = locations_.find(path);
  SourceLocation where = it != locations_.end() ? it->second : to_location(file_, value.Mark());
  issues_.push_back(ConfigIssue{std::move(where), path, value_text(value), std::move(message)});
  failed_.push_back(path);
}

void YamlReader::map(const YAML::Node& node, const std::string& path, std::span<const Field> fields) {
  if (node.IsNull()) return;
  std::vector<std::string_view> known;
  for (const auto& f : fields) known.push_back(f.key);
  if (!node.IsMap()) {
    error(path, node, (path.empty() ? "the configuration must be a map with keys: " : "must be a map with keys: ") +
                          join(known));
    return;
  }
  std::vector<std::pair<std::string, YAML::Mark>> seen;
  for (const auto& entry : node) {  // entries are values: copy the nodes out of them
    const YAML::Node key = entry.first;
    const YAML::Node value = entry.second;
    if (!key.IsScalar()) {
      error_at(key.Mark(), path, "", "keys must be plain names; allowed keys: " + join(known));
      continue;
    }
    const std::string& name = key.Scalar();
    const std::string key_path = child_path(path, name);
    bool duplicate = false;
    for (const auto& [seen_name, mark] : seen) {
      if (seen_name != name) continue;
      const auto first = to_location(file_, mark);
      error_at(key.Mark(), key_path, value_text(value),
               "duplicate key (first written at line " + std::to_string(first.line) + ", column " +
                   std::to_string(first.column) + ")");
      duplicate = true;
      break;
    }
    if (duplicate) continue;
    seen.emplace_back(name, key.Mark());

    const Field* field = nullptr;
    for (const auto& f : fields)
      if (f.key == name) field = &f;
    if (!field) {
      const std::string hint = did_you_mean(name, known);
      error_at(key.Mark(), key_path, value_text(value),
               hint.empty() ? "unknown key; allowed keys: " + join(known) : "unknown key" + hint);
      continue;
    }
    record(key_path, key.Mark());
    field->read(value, key_path);
  }
}

void YamlReader::list(const YAML::Node& node, const std::string& path, std::string_view what,
                      const std::function<void(const YAML::Node&, const std::string&)>& item) {
  if (node.IsNull()) return;
  if (!node.IsSequence()) {
    error(path, node, "must be a list of " + std::string(what));
    return;
  }
  size_t i = 0;
  for (const auto& child : node) {
    const std::string p = item_path(path, i++);
    record(p, child.Mark());
    item(child, p);
  }
}

std::optional<std::string> YamlReader::scalar(const YAML::Node& node, const std::string& path,
                                              const std::string& allowed, bool quoted_ok) {
  if (node.IsNull()) {
    error(path, node, "has no value; " + allowed);
  } else if (node.IsMap()) {
    error(path, node, allowed + ", not a map");
  } else if (node.IsSequence()) {
    error(path, node, allowed + ", not a list");
  } else if (!quoted_ok && is_quoted(node)) {
    error(path, node, allowed + ", not a quoted string");
  } else {
    return node.Scalar();
  }
  return std::nullopt;
}

void YamlReader::text(const YAML::Node& node, const std::string& path, std::string& out) {
  if (auto s = scalar(node, path, "must be a string", true)) out = std::move(*s);
}

void YamlReader::text(const YAML::Node& node, const std::string& path, std::optional<std::string>& out) {
  if (auto s = scalar(node, path, "must be a string", true)) out = std::move(*s);
}

void YamlReader::boolean(const YAML::Node& node, const std::string& path, bool& out) {
  const std::string allowed = "must be true or false";
  auto s = scalar(node, path, allowed, false);
  if (!s) return;
  if (auto b = parse_bool(*s)) out = *b;
  else error(path, node, allowed);
}

void YamlReader::number(const YAML::Node& node, const std::string& path, double& out, double min) {
  const std::string allowed = "must be a number >= " + show(min);
  auto s = scalar(node, path, allowed, false);
  if (!s) return;
  if (auto v = parse_double(*s)) out = *v;
  else error(path, node, allowed);
}

std::optional<uint64_t> YamlReader::integer_value(const YAML::Node& node, const std::string& path, Range type,
                                                  const std::string& message) {
  auto s = scalar(node, path, message, false);
  if (!s) return std::nullopt;
  auto v = parse_int(*s);
  if (!v || !fits(*v, type)) {
    error(path, node, message);
    return std::nullopt;
  }
  return v->negative ? 0 - v->magnitude : v->magnitude;
}

void YamlReader::integer_or_auto(const YAML::Node& node, const std::string& path, std::optional<uint32_t>& out,
                                 Range allowed) {
  if (node.IsScalar() && !is_quoted(node) && node.Scalar() == "auto") {
    out.reset();
    return;
  }
  if (auto v = integer_value(node, path, type_range<uint32_t>(), allowed.describe() + ", or auto"))
    out = static_cast<uint32_t>(*v);
}

std::optional<size_t> YamlReader::choice_index(const YAML::Node& node, const std::string& path,
                                               std::span<const std::string_view> names) {
  const std::string allowed = "must be one of: " + join(names);
  auto s = scalar(node, path, allowed, true);
  if (!s) return std::nullopt;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == *s) return i;
  error(path, node, allowed + did_you_mean(*s, names));
  return std::nullopt;
}

void YamlReader::port_or_range(const YAML::Node& node, const std::string& path, std::optional<uint16_t>& first,
                               std::optional<uint16_t>& last) {
  const std::string allowed = "must be a port 0..65535 or a range \"FIRST-LAST\" of ports";
  auto s = scalar(node, path, allowed, true);
  if (!s) return;
  const auto dash = s->find('-', 1);  // not a leading minus sign
  const std::string_view text(*s);
  auto a = parse_int(text.substr(0, dash));
  auto b = dash == std::string::npos ? a : parse_int(text.substr(dash + 1));
  const Range port = type_range<uint16_t>();
  if (!a || !b || !fits(*a, port) || !fits(*b, port) || a->negative || b->negative) {
    error(path, node, allowed);
    return;
  }
  first = static_cast<uint16_t>(a->magnitude);
  if (dash != std::string::npos) last = static_cast<uint16_t>(b->magnitude);
}

}  // namespace netdaq::detail
