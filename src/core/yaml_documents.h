// Splits YAML text into documents without YAML::LoadAll, which loops forever (allocating a
// null document each turn) on a stray ',' in yaml-cpp 0.7 (jbeder/yaml-cpp#1040, fixed by
// PR #1319 after 0.7). Found by tests/fuzz/config_fuzz.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace netdaq::detail {

struct YamlDocuments {
  YAML::Node first;   // the first document; null when there is none
  size_t count = 0;   // documents in the text
  YAML::Mark second;  // where the second document starts (when count > 1)
};

// Throws YAML::ParserException on a syntax error in any document, including a token the
// parser cannot make progress on.
YamlDocuments load_documents(const std::string& text);

}  // namespace netdaq::detail
