// docs/config.md lists every engine option as its engine declares it (key, type, default):
// the declarations (src/engines/<name>/describe.cpp) are the one source; this test fails when
// the docs disagree, so a new option cannot go undocumented.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/engine_descriptor.h"
#include "test_paths.h"

using namespace netdaq::detail;

namespace {

struct DocRow {
  std::string type, default_value;
};

std::string cell(const std::string& row, size_t index) {
  std::vector<std::string> cells;
  std::stringstream s(row);
  std::string c;
  while (std::getline(s, c, '|')) cells.push_back(c);
  // "| a | b |" splits into "", " a ", " b "
  if (index + 1 >= cells.size()) return "";
  std::string v = cells[index + 1];
  const auto first = v.find_first_not_of(' '), last = v.find_last_not_of(' ');
  return first == std::string::npos ? "" : v.substr(first, last - first + 1);
}

// The default column as the declarations show it: the first `code` span ("" for `""`), or
// the word "empty" for an empty list.
std::string default_of(const std::string& text) {
  const auto a = text.find('`');
  if (a == std::string::npos) return text;
  const auto b = text.find('`', a + 1);
  std::string v = text.substr(a + 1, b - a - 1);
  return v == "\"\"" ? "" : v;
}

// The table under the heading "### `key`" (an interface block) or "## `key`" (top level).
std::map<std::string, DocRow> documented(const std::string& key, bool top_level) {
  std::ifstream in(std::string(NETDAQ_SOURCE_DIR) + "/docs/config.md");
  const std::string heading = std::string(top_level ? "## `" : "### `") + key + "`";
  std::map<std::string, DocRow> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      if (inside) break;
      inside = line == heading;
      continue;
    }
    if (!inside || line.rfind("| `", 0) != 0) continue;
    const std::string name = cell(line, 0);
    rows[name.substr(1, name.size() - 2)] = {cell(line, 1), default_of(cell(line, 2))};
  }
  return rows;
}

}  // namespace

TEST(EngineOptionDocs, ConfigMdListsEveryDeclaredOptionWithItsTypeAndDefault) {
  size_t blocks = 0;
  for (const auto* engine : engine_descriptors()) {
    for (const auto& block : engine->blocks) {
      ++blocks;
      const std::string key(block.key);
      auto rows = documented(key, block.top_level);
      ASSERT_FALSE(rows.empty()) << "docs/config.md has no table under " << (block.top_level ? "## `" : "### `") << key
                                 << "` (the " << engine->name << " engine's options)";
      for (const auto& o : block.docs()) {
        auto it = rows.find(o.key);
        if (it == rows.end()) {
          ADD_FAILURE() << key << "." << o.key << " (" << o.doc << ") is not in docs/config.md";
          continue;
        }
        EXPECT_EQ(it->second.type, o.type) << key << "." << o.key;
        EXPECT_EQ(it->second.default_value, o.default_value) << key << "." << o.key;
        rows.erase(it);
      }
      for (const auto& [name, row] : rows)
        ADD_FAILURE() << "docs/config.md lists " << key << "." << name << ", which the " << engine->name
                      << " engine does not declare";
    }
  }
  EXPECT_GE(blocks, 4u) << "socket:, afxdp:, dpdk: and eal: at least";
}
