// Config::load / Config::parse: YAML -> structs, key locations, and load errors.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "run_block.h"
#include "netdaq/config.h"

namespace netdaq {
namespace {

using test::config_data;
using test::expect_issue;
using test::parse_issues;

class ConfigLoad : public ::testing::Test {
 protected:
  void SetUp() override { test::ensure_socket_engine(); }
};

// The smallest valid config, to which tests add one thing.
const std::string kMinimal = R"(memory_regions:
  - {name: pool, buf_size: 2048, num_bufs: 8192}
interfaces:
  - name: eth0
    address: udp://0.0.0.0:5000
    rx:
      queues:
        - {id: 0, memory_regions: [pool]}
)";

TEST_F(ConfigLoad, FullConfigRoundTrip) {
  const std::string path = config_data("full.yaml");
  const Config cfg = Config::load(path);
  EXPECT_EQ(cfg.source, path);

  ASSERT_EQ(cfg.memory_regions.size(), 3u);
  const auto& hdr = cfg.memory_regions[0];
  EXPECT_EQ(hdr.name, "hdr");
  EXPECT_EQ(hdr.kind, MemoryKind::huge);
  EXPECT_EQ(hdr.buf_size, 128u);
  EXPECT_EQ(hdr.num_bufs, 16384u);
  EXPECT_FALSE(hdr.hugepages_required);
  EXPECT_EQ(cfg.memory_regions[1].kind, MemoryKind::host);
  EXPECT_EQ(cfg.memory_regions[1].buf_size, 9000u);
  const auto& staging = cfg.memory_regions[2];
  EXPECT_EQ(staging.kind, MemoryKind::pinned);
  EXPECT_EQ(staging.gpu, 0);

  ASSERT_EQ(cfg.interfaces.size(), 2u);
  const auto& in = cfg.interfaces[0];
  EXPECT_EQ(in.name, "sensor0");
  EXPECT_EQ(in.engine, "socket");
  EXPECT_EQ(in.address, "udp://239.1.2.3:5000");
  ASSERT_EQ(in.rx.queues.size(), 2u);
  const auto& q0 = in.rx.queues[0];
  EXPECT_EQ(q0.id, 0);
  EXPECT_EQ(q0.name, "sensor0-main");
  EXPECT_EQ(q0.mode, PollMode::worker);
  EXPECT_EQ(q0.cpu_core, 1);
  EXPECT_EQ(q0.batch_size, 64u);
  EXPECT_EQ(q0.timeout_us, 200u);
  EXPECT_EQ(q0.ring_depth, 32u);
  EXPECT_EQ(q0.memory_regions, (std::vector<std::string>{"hdr", "payload"}));
  const auto& q1 = in.rx.queues[1];
  EXPECT_EQ(q1.id, 1);
  EXPECT_EQ(q1.mode, PollMode::direct);
  EXPECT_EQ(q1.cpu_core, -1);  // default kept
  EXPECT_EQ(q1.timeout_us, 100u);

  ASSERT_EQ(in.rx.flows.size(), 2u);
  const auto& m = in.rx.flows[0].match;
  EXPECT_EQ(m.udp_src, 4096);
  EXPECT_FALSE(m.udp_src_end);
  EXPECT_EQ(m.udp_dst, 5000);
  EXPECT_EQ(m.udp_dst_end, 5003);
  EXPECT_EQ(m.ip_src, "10.0.0.1");
  EXPECT_EQ(m.ip_dst, "fd00::2");
  EXPECT_EQ(m.vlan, 100);
  EXPECT_EQ(in.rx.flows[1].id, 1u);
  EXPECT_EQ(in.rx.flows[1].queue, 1);
  EXPECT_FALSE(in.rx.flows[1].match.vlan);

  EXPECT_TRUE(in.options.get<SocketOptions>().gro);
  EXPECT_FALSE(in.options.get<SocketOptions>().gso);
  EXPECT_EQ(in.options.get<SocketOptions>().rcvbuf, 64u << 20);
  EXPECT_EQ(in.options.get<SocketOptions>().sndbuf, 8u << 20);
  EXPECT_EQ(in.options.get<SocketOptions>().busy_poll_us, 50u);
  EXPECT_EQ(in.options.get<SocketOptions>().multicast_interface, "eth0");
  EXPECT_EQ(in.options.get<SocketOptions>().tcp_max_message, 0u);
  EXPECT_EQ(in.options.get<SocketOptions>().reconnect_ms, 100u);

  const auto& out = cfg.interfaces[1];
  ASSERT_EQ(out.tx.queues.size(), 1u);
  EXPECT_EQ(out.tx.queues[0].memory_regions, (std::vector<std::string>{"staging"}));
  EXPECT_EQ(out.tx.destination, "udp://127.0.0.1:5000");
  EXPECT_DOUBLE_EQ(out.tx.rate_mbps, 1000.5);
  EXPECT_DOUBLE_EQ(out.tx.rate_pps, 0);

  EXPECT_DOUBLE_EQ(netdaq::cli::run_block(cfg).duration_s, 2.5);
  EXPECT_EQ(netdaq::cli::run_block(cfg).tx_packets, 100000u);
  EXPECT_EQ(netdaq::cli::run_block(cfg).tx_payload_size, 1400u);
  EXPECT_EQ(netdaq::cli::run_block(cfg).stats_interval_ms, 500u);
  EXPECT_EQ(netdaq::cli::run_block(cfg).drain_ms, 300u);
  EXPECT_EQ(cfg.log.level, "debug");
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigLoad, RecordsEveryKeyLocation) {
  const std::string path = config_data("full.yaml");
  const Config cfg = Config::load(path);
  auto at = [&](const std::string& key) {
    auto it = cfg.locations.find(key);
    EXPECT_NE(it, cfg.locations.end()) << key;
    return it == cfg.locations.end() ? std::string("?") : it->second.file + ":" + std::to_string(it->second.line) +
                                                              ":" + std::to_string(it->second.column);
  };
  EXPECT_EQ(at("memory_regions"), path + ":2:1");
  EXPECT_EQ(at("memory_regions[0]"), path + ":3:5");
  EXPECT_EQ(at("memory_regions[2]"), path + ":13:5");
  EXPECT_EQ(at("memory_regions[2].gpu"), path + ":13:35");
  EXPECT_EQ(at("interfaces[0].rx.queues[0].batch_size"), path + ":24:11");
  EXPECT_EQ(at("interfaces[0].rx.queues[0].memory_regions[1]"), path + ":27:33");
  EXPECT_EQ(at("interfaces[0].rx.queues[1].batch_size"), path + ":28:33");
  EXPECT_EQ(at("interfaces[0].rx.flows[0].match.udp_dst"), path + ":32:34");
  EXPECT_EQ(at("interfaces[0].socket.reconnect_ms"), path + ":42:7");
  EXPECT_EQ(at("interfaces[1].tx.rate_mbps"), path + ":49:7");
  EXPECT_EQ(at("run.drain_ms"), path + ":56:3");
  EXPECT_EQ(at("log.level"), path + ":58:3");
  // Every key written in the file has a location: 90 keys and list items.
  EXPECT_EQ(cfg.locations.size(), 90u);
  // Unwritten keys resolve to their nearest written ancestor.
  const auto loc = cfg.location_of("interfaces[0].rx.queues[1].cpu_core");
  EXPECT_EQ(loc.line, 28);
  EXPECT_EQ(loc.column, 11);
}

TEST_F(ConfigLoad, ParseNamesTheSource) {
  EXPECT_EQ(Config::parse(kMinimal).source, "<string>");
  const Config cfg = Config::parse(kMinimal, "inline.yaml");
  EXPECT_EQ(cfg.source, "inline.yaml");
  EXPECT_EQ(cfg.locations.at("interfaces[0].address").file, "inline.yaml");
}

TEST_F(ConfigLoad, ReportsEveryLoadErrorWithItsLocation) {
  const std::string path = config_data("load_errors.yaml");
  const auto issues = test::issues_of([&] { Config::load(path); });
  ASSERT_EQ(issues.size(), 15u);
  expect_issue(issues, path, 3, 5, "memory_regions[0].kind", "hgue",
               "must be one of: host, huge, pinned, mapped, device (did you mean 'huge'?)");
  expect_issue(issues, path, 4, 5, "memory_regions[0].buf_size", "big", "must be an integer 64..1048576");
  expect_issue(issues, path, 5, 5, "memory_regions[0].num_bufs", "-5", "must be an integer 1..1073741824");
  expect_issue(issues, path, 6, 5, "memory_regions[0].gpu", "99999999999", "must be an integer -1..2147483647");
  expect_issue(issues, path, 7, 5, "memory_regions[0].hugepages_required", "maybe", "must be true or false");
  expect_issue(issues, path, 15, 11, "interfaces[0].rx.queues[0].batch_sise", "32",
               "unknown key (did you mean 'batch_size'?)");
  expect_issue(issues, path, 16, 11, "interfaces[0].rx.queues[0].mode", "polling", "must be one of: direct, worker");
  expect_issue(issues, path, 17, 11, "interfaces[0].rx.queues[0].timeout_us", "100",
               "must be an integer 0..10000000, not a quoted string");
  expect_issue(issues, path, 18, 11, "interfaces[0].rx.queues[0].memory_regions", "pool",
               "must be a list of region names");
  expect_issue(issues, path, 20, 37, "interfaces[0].rx.flows[0].match.udp_dst", "5000-70000",
               "must be a port 0..65535 or a range \"FIRST-LAST\" of ports");
  expect_issue(issues, path, 21, 5, "interfaces[0].tx", "5",
               "must be a map with keys: queues, destination, rate_mbps, rate_pps");
  expect_issue(issues, path, 22, 14, "interfaces[0].socket.gro", "1", "must be true or false");
  expect_issue(issues, path, 24, 3, "run.duration_s", "soon", "must be a number >= 0");
  expect_issue(issues, path, 25, 3, "run.tx_packets", "18446744073709551616",
               "must be an integer 0..18446744073709551615");
  expect_issue(issues, path, 26, 20, "log.level", "debug", "duplicate key (first written at line 26, column 7)");
  // In file order.
  for (size_t i = 1; i < issues.size(); ++i) EXPECT_LE(issues[i - 1].where.line, issues[i].where.line);
}

TEST_F(ConfigLoad, SyntaxErrorHasLineAndColumn) {
  const std::string path = config_data("syntax_error.yaml");
  const auto issues = test::issues_of([&] { Config::load(path); });
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].where.file, path);
  EXPECT_EQ(issues[0].where.line, 4);
  EXPECT_EQ(issues[0].where.column, 1);
  EXPECT_EQ(issues[0].key, "");
  EXPECT_EQ(issues[0].message, "YAML syntax error: end of sequence flow not found");

  const auto tab = parse_issues("log:\n\tlevel: info\n");
  ASSERT_EQ(tab.size(), 1u);
  EXPECT_EQ(tab[0].where.line, 2);
  EXPECT_NE(tab[0].message.find("YAML syntax error"), std::string::npos);
}

TEST_F(ConfigLoad, ErrorTextListsEveryIssue) {
  try {
    Config::parse("run: {drain_ms: x, stats_interval_ms: -1}\n", "t.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_EQ(std::string(e.what()),
              "invalid configuration (3 errors)\n"
              "  t.yaml:1:7: run.drain_ms = 'x': must be an integer 0..4294967295\n"
              "  t.yaml:1:20: run.stats_interval_ms = '-1': must be an integer 10..4294967295\n"
              "  t.yaml: interfaces: at least one interface is required");
  }
}

TEST_F(ConfigLoad, UnknownKeys) {
  auto issues = parse_issues(kMinimal + "runn: {duration_s: 1}\nfoo: 1\n");
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "test.yaml", 9, 1, "runn", "", "unknown key (did you mean 'run'?)");
  expect_issue(issues, "test.yaml", 10, 1, "foo", "1",
               "unknown key; allowed keys: memory_regions, interfaces, run, log, eal");
  // Case slips are found too.
  issues = parse_issues(kMinimal + "log: {Level: info}\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "unknown key (did you mean 'level'?)");
}

TEST_F(ConfigLoad, DuplicateKeys) {
  const auto issues = parse_issues(kMinimal + "run:\n  drain_ms: 1\n  drain_ms: 2\n");
  ASSERT_EQ(issues.size(), 1u);
  expect_issue(issues, "test.yaml", 11, 3, "run.drain_ms", "2", "duplicate key (first written at line 10, column 3)");
  // The first value is still checked.
  const auto both = parse_issues(kMinimal + "log: {level: loud, level: info}\n");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].value, "loud");
  EXPECT_EQ(both[0].where.column, 7);
  EXPECT_EQ(both[1].value, "info");
  EXPECT_EQ(both[1].message, "duplicate key (first written at line 9, column 7)");
}

TEST_F(ConfigLoad, WrongTypes) {
  const auto issues = parse_issues(R"(memory_regions:
  - name: {a: 1}
    buf_size: [1, 2]
    num_bufs:
    kind: 3
interfaces: eth0
run: [1]
log: {level: [info]}
)");
  ASSERT_EQ(issues.size(), 7u);
  expect_issue(issues, "test.yaml", 2, 5, "memory_regions[0].name", "", "must be a string, not a map");
  expect_issue(issues, "test.yaml", 3, 5, "memory_regions[0].buf_size", "", "must be an integer 64..1048576, not a list");
  expect_issue(issues, "test.yaml", 4, 5, "memory_regions[0].num_bufs", "",
               "has no value; must be an integer 1..1073741824");
  expect_issue(issues, "test.yaml", 5, 5, "memory_regions[0].kind", "3", "must be one of: host, huge");
  expect_issue(issues, "test.yaml", 6, 1, "interfaces", "eth0", "must be a list of interfaces");
  expect_issue(issues, "test.yaml", 7, 1, "run", "", "must be a map with keys: duration_s, tx_packets");
  expect_issue(issues, "test.yaml", 8, 7, "log.level", "", "must be a string, not a list");
}

TEST_F(ConfigLoad, NumbersThatDoNotFit) {
  const auto issues = parse_issues(R"(memory_regions:
  - {name: pool, buf_size: 4294967296, num_bufs: 1.5}
interfaces:
  - name: eth0
    address: udp://0.0.0.0:5000
    rx:
      queues:
        - {id: 65536, cpu_core: -2147483649, memory_regions: [pool]}
        - {id: -1, batch_size: 0x10, memory_regions: [pool]}
)");
  ASSERT_EQ(issues.size(), 5u);
  expect_issue(issues, "test.yaml", 2, 18, "memory_regions[0].buf_size", "4294967296", "must be an integer 64..1048576");
  expect_issue(issues, "test.yaml", 2, 40, "memory_regions[0].num_bufs", "1.5", "must be an integer 1..1073741824");
  expect_issue(issues, "test.yaml", 8, 12, "interfaces[0].rx.queues[0].id", "65536", "must be an integer 0..65535");
  expect_issue(issues, "test.yaml", 8, 23, "interfaces[0].rx.queues[0].cpu_core", "-2147483649",
               "must be an integer -1..1023");
  expect_issue(issues, "test.yaml", 9, 12, "interfaces[0].rx.queues[1].id", "-1", "must be an integer 0..65535");
}

TEST_F(ConfigLoad, AcceptedSpellings) {
  const Config cfg = Config::parse(R"(memory_regions:
  - {name: pool, buf_size: 0x800, num_bufs: +8192, hugepages_required: yes}
interfaces:
  - name: 7
    address: udp://0.0.0.0:5000
    rx:
      queues:
        - {id: 0, memory_regions: [pool]}
      flows:
        - {queue: 0, match: {udp_src: "4000", udp_dst: 5000-5010}}
    socket: {gro: off, gso: True}
    tx:
      rate_mbps: 1e3
run: {duration_s: 0}
)");
  EXPECT_EQ(cfg.memory_regions[0].buf_size, 2048u);
  EXPECT_EQ(cfg.memory_regions[0].num_bufs, 8192u);
  EXPECT_TRUE(cfg.memory_regions[0].hugepages_required);
  EXPECT_EQ(cfg.interfaces[0].name, "7");
  const auto& m = cfg.interfaces[0].rx.flows[0].match;
  EXPECT_EQ(m.udp_src, 4000);
  EXPECT_FALSE(m.udp_src_end);
  EXPECT_EQ(m.udp_dst, 5000);
  EXPECT_EQ(m.udp_dst_end, 5010);
  EXPECT_FALSE(cfg.interfaces[0].options.get<SocketOptions>().gro);
  EXPECT_TRUE(cfg.interfaces[0].options.get<SocketOptions>().gso);
  EXPECT_DOUBLE_EQ(cfg.interfaces[0].tx.rate_mbps, 1000);
  EXPECT_DOUBLE_EQ(netdaq::cli::run_block(cfg).duration_s, 0);
}

TEST_F(ConfigLoad, NullListsAndMapsAreEmpty) {
  const Config cfg = Config::parse(kMinimal + "    tx:\n    socket:\nrun:\nlog:\n");
  EXPECT_TRUE(cfg.interfaces[0].tx.queues.empty());
  EXPECT_EQ(cfg.log.level, "info");
}

TEST_F(ConfigLoad, LoadErrorIsNotRepeatedByValidation) {
  // The region's name failed to load; "name is required" would only repeat that.
  const auto issues = parse_issues(R"(memory_regions:
  - {name: [pool], buf_size: 2048}
interfaces:
  - {name: eth0, address: udp://0.0.0.0:5000, rx: {queues: [{memory_regions: [pool]}]}}
)");
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "test.yaml", 2, 6, "memory_regions[0].name", "", "must be a string, not a list");
  expect_issue(issues, "test.yaml", 4, 79, "interfaces[0].rx.queues[0].memory_regions[0]", "pool",
               "is not a defined memory region");
}

TEST_F(ConfigLoad, LoadAndValidationErrorsTogether) {
  const auto issues = parse_issues(R"(memory_regions:
  - {name: pool, buf_size: 10, num_bufs: lots}
interfaces:
  - {name: eth0, engine: sokcet, rx: {queues: [{batch_size: 4096, memory_regions: [pol]}]}}
)");
  ASSERT_EQ(issues.size(), 5u);
  expect_issue(issues, "test.yaml", 2, 18, "memory_regions[0].buf_size", "10", "must be an integer 64..1048576");
  expect_issue(issues, "test.yaml", 2, 32, "memory_regions[0].num_bufs", "lots", "must be an integer 1..1073741824");
  expect_issue(issues, "test.yaml", 4, 18, "interfaces[0].engine", "sokcet", "(did you mean 'socket'?)");
  expect_issue(issues, "test.yaml", 4, 49, "interfaces[0].rx.queues[0].batch_size", "4096", "must be an integer 1..1024");
  expect_issue(issues, "test.yaml", 4, 84, "interfaces[0].rx.queues[0].memory_regions[0]", "pol",
               "is not a defined memory region (did you mean 'pool'?); defined: pool");
}

TEST_F(ConfigLoad, DocumentShape) {
  auto issues = parse_issues("- a\n- b\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "the configuration must be a map with keys: memory_regions, interfaces, run, log, eal");
  EXPECT_EQ(issues[0].where.line, 1);

  issues = parse_issues(kMinimal + "---\nlog: {level: info}\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].where.line, 9);  // at the '---'
  EXPECT_EQ(issues[0].message, "a configuration holds one YAML document; found 2 (separated by '---')");

  issues = parse_issues("");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].key, "interfaces");
  EXPECT_EQ(issues[0].message, "at least one interface is required");
}

// yaml-cpp 0.7's LoadAll loops forever on these, allocating as it goes (found by fuzzing).
TEST_F(ConfigLoad, StrayCommaIsASyntaxError) {
  auto issues = parse_issues(",");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "YAML syntax error: unexpected ','");
  EXPECT_EQ(issues[0].where.line, 1);
  EXPECT_EQ(issues[0].where.column, 1);

  issues = parse_issues(kMinimal + "...\n,\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "YAML syntax error: unexpected ','");
  EXPECT_EQ(issues[0].where.line, 10);
  EXPECT_EQ(issues[0].where.column, 1);

  issues = test::issues_of([] { Config::load(config_data("fuzz/stray_comma_hang.yaml")); });
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "YAML syntax error: unexpected ','");
}

TEST_F(ConfigLoad, UnreadableFile) {
  const auto issues = test::issues_of([] { Config::load("/nonexistent/netdaq.yaml"); });
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].where.file, "/nonexistent/netdaq.yaml");
  EXPECT_EQ(issues[0].where.line, 0);
  EXPECT_EQ(issues[0].message, "cannot read the configuration file: No such file or directory");
}

TEST_F(ConfigLoad, LongValuesAreCutInMessages) {
  const auto issues = parse_issues(kMinimal + "log: {level: " + std::string(500, 'x') + "}\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].key, "log.level");
  EXPECT_LT(issues[0].to_string().size(), 300u);
}

}  // namespace
}  // namespace netdaq
