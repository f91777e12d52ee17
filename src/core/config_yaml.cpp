// Config::load / Config::parse: YAML text -> Config, then validation; every problem found by
// either step is thrown together in one ConfigError.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/config_yaml_fields.h"
#include "core/yaml_documents.h"
#include "core/yaml_reader.h"
#include "netdaq/config.h"

namespace netdaq {

namespace {

struct ReadResult {
  std::vector<ConfigIssue> issues;
  std::vector<std::string> failed;  // key paths whose values could not be read
  bool complete = false;            // the document was read (possibly with problems in some values)
};

ReadResult read_yaml(const std::string& text, const std::string& source, Config& cfg) {
  ReadResult result;
  auto& issues = result.issues;
  try {
    const detail::YamlDocuments docs = detail::load_documents(text);
    if (docs.count > 1)
      issues.push_back({detail::to_location(source, docs.second), "", "",
                        "a configuration holds one YAML document; found " + std::to_string(docs.count) +
                            " (separated by '---')"});
    detail::YamlReader reader(source, cfg.locations, issues);
    const YAML::Node& root = docs.first;
    detail::read_config(reader, root, cfg);
    result.failed = reader.failed();
    result.complete = root.IsMap() || root.IsNull();
  } catch (const YAML::Exception& e) {
    issues.push_back({detail::to_location(source, e.mark), "", "", "YAML syntax error: " + e.msg});
  } catch (const std::exception& e) {  // yaml-cpp may let a standard exception through
    issues.push_back({SourceLocation{source, 0, 0}, "", "", std::string("cannot read YAML: ") + e.what()});
  }
  return result;
}

bool same_or_below(const std::string& key, const std::string& ancestor) {
  if (!key.starts_with(ancestor)) return false;
  return key.size() == ancestor.size() || key[ancestor.size()] == '.' || key[ancestor.size()] == '[';
}

// Validation issues about a value that failed to load (or inside one) would only repeat it.
void add_validation_issues(const Config& cfg, const std::vector<std::string>& failed, std::vector<ConfigIssue>& issues) {
  for (auto& v : cfg.validate()) {
    const bool repeated =
        std::any_of(failed.begin(), failed.end(), [&](const std::string& f) { return same_or_below(v.key, f); });
    if (!repeated) issues.push_back(std::move(v));
  }
}

// In file order; issues without a line (keys that were not written) last.
void sort_by_location(std::vector<ConfigIssue>& issues) {
  auto order = [](const ConfigIssue& i) {
    return std::pair{i.where.line > 0 ? i.where.line : INT_MAX, i.where.column};
  };
  std::stable_sort(issues.begin(), issues.end(),
                   [&](const ConfigIssue& a, const ConfigIssue& b) { return order(a) < order(b); });
}

}  // namespace

Config Config::parse(const std::string& yaml_text, const std::string& source_name) {
  Config cfg;
  cfg.source = source_name;
  auto [issues, failed, complete] = read_yaml(yaml_text, source_name, cfg);
  if (complete) add_validation_issues(cfg, failed, issues);
  if (!issues.empty()) {
    sort_by_location(issues);
    throw ConfigError(std::move(issues));
  }
  return cfg;
}

Config Config::load(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  std::string text;
  if (f) {
    char buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  }
  if (!f || std::ferror(f.get())) {
    const int err = errno;
    throw ConfigError({ConfigIssue{SourceLocation{path, 0, 0}, "", "",
                                   std::string("cannot read the configuration file: ") + std::strerror(err)}});
  }
  return parse(text, path);
}

}  // namespace netdaq
