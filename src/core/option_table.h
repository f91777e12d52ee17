// An engine's options declared once: key, type, allowed range, default (the struct's own
// member initialiser) and a one-line doc. From the declarations come the YAML reader, the
// "set on the wrong engine" check (values differing from the defaults) and the docs check
// (tests/unit/engine_options_doc_test.cpp compares them with docs/config.md).
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/config_limits.h"
#include "core/engine_descriptor.h"
#include "core/yaml_reader.h"

namespace netdaq::detail {

template <class T>
struct OptionDecl {
  std::string_view key;
  std::string_view type;  // as docs/config.md writes it
  std::string_view doc;
  std::function<void(YamlReader&, const YAML::Node&, const std::string& path, T&)> read;
  std::function<std::string(const T&)> show;  // the value as the docs and messages write it
};

namespace option {

template <class T>
OptionDecl<T> flag(std::string_view key, bool T::*m, std::string_view doc) {
  return {key, "boolean", doc, [m](YamlReader& r, const YAML::Node& v, const std::string& p, T& t) { r.boolean(v, p, t.*m); },
          [m](const T& t) { return std::string(t.*m ? "true" : "false"); }};
}

template <class T, class I>
OptionDecl<T> integer(std::string_view key, I T::*m, Range allowed, std::string_view doc) {
  return {key, "integer", doc,
          [m, allowed](YamlReader& r, const YAML::Node& v, const std::string& p, T& t) { r.integer(v, p, t.*m, allowed); },
          [m](const T& t) { return std::to_string(t.*m); }};
}
template <class T, class I>
OptionDecl<T> integer(std::string_view key, I T::*m, std::string_view doc) {
  return integer(key, m, type_range<I>(), doc);
}

template <class T>
OptionDecl<T> text(std::string_view key, std::string T::*m, std::string_view doc) {
  return {key, "string", doc, [m](YamlReader& r, const YAML::Node& v, const std::string& p, T& t) { r.text(v, p, t.*m); },
          [m](const T& t) { return t.*m; }};
}

// One of `names` (a static table): the enum's value is the name's index.
template <class T, class E, size_t N>
OptionDecl<T> choice(std::string_view key, E T::*m, const std::array<std::string_view, N>& names, std::string_view doc) {
  return {key, "string", doc,
          [m, &names](YamlReader& r, const YAML::Node& v, const std::string& p, T& t) { r.choice(v, p, t.*m, names); },
          [m, &names](const T& t) { return std::string(names[static_cast<size_t>(t.*m)]); }};
}

// "a, b, c", or "empty" (as docs/config.md writes an empty list).
template <class Item>
std::string show_list(const std::vector<Item>& items) {
  std::string s;
  for (const auto& i : items) {
    if (!s.empty()) s += ", ";
    if constexpr (std::is_arithmetic_v<Item>) s += std::to_string(i);
    else s += i;
  }
  return s.empty() ? "empty" : s;
}

// A list of strings; `what` names the items in messages ("PCI addresses").
template <class T>
OptionDecl<T> strings(std::string_view key, std::vector<std::string> T::*m, std::string_view what, std::string_view doc) {
  return {key, "list of strings", doc,
          [m, what](YamlReader& r, const YAML::Node& v, const std::string& p, T& t) {
            r.list(v, p, what, [&](const YAML::Node& item, const std::string& ip) { r.text(item, ip, (t.*m).emplace_back()); });
          },
          [m](const T& t) { return show_list(t.*m); }};
}

template <class T>
OptionDecl<T> integers(std::string_view key, std::vector<int> T::*m, Range allowed, std::string_view what,
                       std::string_view doc) {
  return {key, "list of integers", doc,
          [m, allowed, what](YamlReader& r, const YAML::Node& v, const std::string& p, T& t) {
            r.list(v, p, what,
                   [&](const YAML::Node& item, const std::string& ip) { r.integer(item, ip, (t.*m).emplace_back(), allowed); });
          },
          [m](const T& t) { return show_list(t.*m); }};
}

}  // namespace option

// The block spec of T (T::kKey) from its declarations; `table` must outlive it (a static).
template <class T>
OptionBlockSpec block_spec(const std::vector<OptionDecl<T>>& table, bool top_level = false) {
  OptionBlockSpec s;
  s.key = T::kKey;
  s.top_level = top_level;
  s.make = [] { return std::make_unique<OptionBlockOf<T>>(); };
  s.read = [&table](YamlReader& r, const YAML::Node& n, const std::string& path, OptionBlock& block) {
    T& t = static_cast<OptionBlockOf<T>&>(block).value;
    std::vector<YamlReader::Field> fields;
    for (const auto& d : table)
      fields.push_back({d.key, [&r, &d, &t](const YAML::Node& v, const std::string& p) { d.read(r, v, p, t); }});
    r.map(n, path, fields);
  };
  s.set_options = [&table](const OptionBlock& block) {
    const T& t = static_cast<const OptionBlockOf<T>&>(block).value;
    const T defaults{};
    std::vector<SetOption> out;
    for (const auto& d : table)
      if (auto v = d.show(t); v != d.show(defaults)) out.push_back({std::string(d.key), v});
    return out;
  };
  s.docs = [&table] {
    const T defaults{};
    std::vector<OptionDoc> out;
    for (const auto& d : table)
      out.push_back({std::string(d.key), std::string(d.type), d.show(defaults), std::string(d.doc)});
    return out;
  };
  return s;
}

}  // namespace netdaq::detail
