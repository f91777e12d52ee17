#include "core/yaml_documents.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

namespace netdaq::detail {

namespace {

// Records where each document starts and ignores everything else.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::string describe_char(const std::string& text, int pos) {
  if (pos < 0 || static_cast<size_t>(pos) >= text.size()) return "unexpected token";
  const unsigned char c = static_cast<unsigned char>(text[static_cast<size_t>(pos)]);
  if (c >= 0x21 && c < 0x7f) return std::string("unexpected '") + static_cast<char>(c) + "'";
  return "unexpected token";
}

}  // namespace

YamlDocuments load_documents(const std::string& text) {
  // First pass: count the documents and check every one parses, stopping where the parser
  // starts a document at the same place as the one before (it consumed nothing).
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts docs;
  while (parser.HandleNextDocument(docs)) {
    const size_t n = docs.starts.size();
    if (n >= 2 && docs.starts[n - 1].pos == docs.starts[n - 2].pos)
      throw YAML::ParserException(docs.starts[n - 1], describe_char(text, docs.starts[n - 1].pos));
  }
  YamlDocuments result;
  result.count = docs.starts.size();
  if (result.count > 1) result.second = docs.starts[1];
  // Second pass: build the first document's nodes (YAML::Load reads only the first).
  if (result.count > 0) result.first = YAML::Load(text);
  return result;
}

}  // namespace netdaq::detail
