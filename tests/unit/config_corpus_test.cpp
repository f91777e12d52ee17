// Replays the fuzz seed corpus (tests/data/config, inputs the fuzzer once tripped on included)
// and hostile inputs through Config::parse: it must return a Config or throw ConfigError,
// never crash or throw anything else. The libFuzzer target (tests/fuzz) explores further.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config_test_util.h"
#include "netdaq/config.h"

namespace netdaq {
namespace {

// Parses `text`; fails the test on anything but success or a well-formed ConfigError.
void expect_clean_outcome(const std::string& text, const std::string& name) {
  try {
    const Config cfg = Config::parse(text, name);
    EXPECT_TRUE(cfg.validate().empty()) << name;
  } catch (const ConfigError& e) {
    EXPECT_FALSE(e.issues().empty()) << name;
    for (const auto& i : e.issues()) {
      EXPECT_FALSE(i.message.empty()) << name;
      EXPECT_GE(i.where.line, 0) << name;
      EXPECT_LE(i.value.size(), 83u) << name;  // cut to 80 + "..."
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << name << ": threw a non-netdaq exception: " << e.what();
  } catch (...) {
    ADD_FAILURE() << name << ": threw something that is not an exception";
  }
}

std::string repeat(const std::string& s, size_t n) {
  std::string r;
  for (size_t i = 0; i < n; ++i) r += s;
  return r;
}

TEST(ConfigCorpus, SeedCorpus) {
  test::ensure_socket_engine();
  const std::filesystem::path dir = test::config_data("");
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    expect_clean_outcome(ss.str(), entry.path().string());
    ++files;
  }
  EXPECT_GE(files, 5u);
}

TEST(ConfigCorpus, HostileInputs) {
  test::ensure_socket_engine();
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"empty", ""},
      {"blank", " \n\t\n"},
      {"document markers", "---\n...\n---\n"},
      {"tilde", "~"},
      {"nul bytes", std::string("interfaces:\0\0\n  - name: a\0", 26)},
      {"invalid utf-8", "log: {level: \xff\xfe\xc3}\n"},
      {"bom", "\xef\xbb\xbflog: {level: info}\n"},
      {"crlf", "log:\r\n  level: info\r\n"},
      {"tab indent", "log:\n\tlevel: info\n"},
      {"deep lists", repeat("[", 100000)},
      {"deep maps", repeat("{a: ", 100000)},
      {"deep block", repeat("- ", 20000) + "x"},
      {"deep in schema", "interfaces: [{rx: {flows: [{match: " + repeat("[", 5000) + "}]}}]"},
      {"self alias", "interfaces: &a [*a]\n"},
      {"unknown alias", "interfaces: *nope\n"},
      {"laughs",
       "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n"
       "memory_regions: [*c, *c, *c, *c, *c, *c, *c, *c]\ninterfaces: *c\n"},
      {"merge key", "base: &b {buf_size: 64}\nmemory_regions: [{<<: *b, name: x}]\n"},
      {"complex key", "? [a, b]\n: c\n"},
      {"tags", "memory_regions: [{name: !!binary aGVsbG8=, buf_size: !!str 64, num_bufs: !foo 1}]\n"},
      {"directive", "%YAML 1.2\n---\nlog: {level: info}\n"},
      {"bad directive", "%YAML 9.9\n%TAG\n---\n"},
      {"long key", repeat("k", 1 << 20) + ": 1\n"},
      {"long value", "log: {level: " + repeat("v", 1 << 20) + "}\n"},
      {"many errors", "run: {" + repeat("x: 1, ", 2000) + "}\n"},
      {"ports",
       "interfaces: [{rx: {flows: [{match: {udp_src: \"-\"}}, {match: {udp_src: \"1-\"}}, {match: {udp_src: "
       "\"-1-2\"}}, {match: {udp_dst: \"0x10-0x20\"}}, {match: {udp_dst: \"1--2\"}}, {match: {udp_dst: \"99999-1\"}}]}}]\n"},
      {"numbers",
       "memory_regions: [{name: a, buf_size: 0x, num_bufs: --1, gpu: -9223372036854775808}, {name: b, buf_size: "
       "-0, num_bufs: 99999999999999999999999999, gpu: 1e400}]\nrun: {duration_s: 1e400, tx_packets: -0}\n"},
      {"nan rates", "interfaces: [{name: a, tx: {rate_mbps: .nan, rate_pps: .inf}}]\nrun: {duration_s: -.inf}\n"},
      {"unterminated quote", "log: {level: \"info}\n"},
      {"unterminated flow", "interfaces: [{name: a"},
      {"stray colon", "::::\n: : :\n"},
      {"stray comma", ","},
      {"comma after document end", "a: 1\n...\n,\n"},
      {"stray flow ends", "]\n}\n"},
      {"anchors everywhere", "&a a: &b b\n&c c: *b\n"},
  };
  for (const auto& [name, text] : inputs) expect_clean_outcome(text, name);
}

}  // namespace
}  // namespace netdaq
