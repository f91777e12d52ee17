// Config::validate: every rule, for Configs built in C++ and loaded from YAML.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "run_block.h"
#include "core/pool_budget.h"
#include "netdaq/config.h"
#include "netdaq/session.h"

namespace netdaq {
namespace {

using test::config_data;
using test::expect_issue;
using test::expect_only;

class ConfigValidate : public ::testing::Test {
 protected:
  void SetUp() override { test::ensure_socket_engine(); }

  // A valid config: one region, a socket interface with one rx and one tx queue.
  static Config valid() {
    Config c;
    c.memory_regions.push_back({.name = "pool", .buf_size = 2048, .num_bufs = 8192});
    InterfaceConfig i;
    i.name = "eth0";
    i.address = "udp://0.0.0.0:5000";
    i.rx.queues.push_back({.id = 0, .memory_regions = {"pool"}});
    i.tx.queues.push_back({.id = 0, .memory_regions = {"pool"}});
    i.tx.destination = "udp://127.0.0.1:6000";
    c.interfaces.push_back(i);
    return c;
  }

  InterfaceConfig& eth0() { return cfg.interfaces[0]; }
  QueueConfig& rx0() { return cfg.interfaces[0].rx.queues[0]; }

  Config cfg = valid();
};

TEST_F(ConfigValidate, ValidCxxConfigPasses) {
  EXPECT_TRUE(cfg.validate().empty());
  EXPECT_NO_THROW(cfg.validate_or_throw());
}

TEST_F(ConfigValidate, CxxIssuesAreLocatedInCxx) {
  rx0().batch_size = 0;
  const auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].where.file, "<c++>");
  EXPECT_EQ(issues[0].where.line, 0);
  EXPECT_EQ(issues[0].to_string(), "<c++>: interfaces[0].rx.queues[0].batch_size = '0': must be an integer 1..1024");
  try {
    cfg.validate_or_throw();
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.issues().size(), 1u);
  }
}

TEST_F(ConfigValidate, NeedsAnInterface) {
  cfg.interfaces.clear();
  expect_only(cfg, "interfaces", "", "at least one interface is required");
}

TEST_F(ConfigValidate, RequiredNames) {
  cfg.memory_regions.push_back({.name = ""});
  expect_only(cfg, "memory_regions[1].name", "", "is required");
  cfg = valid();
  eth0().name.clear();
  expect_only(cfg, "interfaces[0].name", "", "is required");
}

TEST_F(ConfigValidate, SocketEndpoints) {
  eth0().address.clear();
  expect_only(cfg, "interfaces[0].address", "", "is required for the socket engine when rx queues are configured");
  eth0().rx.queues.clear();
  EXPECT_TRUE(cfg.validate().empty());  // no rx queues: no address needed

  cfg = valid();
  eth0().tx.destination.clear();
  expect_only(cfg, "interfaces[0].tx.destination", "", "is required for the socket engine when tx queues");

  cfg = valid();
  eth0().address = "http://x:1";
  expect_only(cfg, "interfaces[0].address", "http://x:1",
              "unknown scheme (expected udp://HOST:PORT or tcp://HOST:PORT; IPv6 as udp://[::1]:PORT)");
  cfg = valid();
  eth0().tx.destination = "udp://[::1:5000";
  expect_only(cfg, "interfaces[0].tx.destination", "udp://[::1:5000", "missing ']' after IPv6 address");
  cfg = valid();
  eth0().address = "tcp://239.0.0.1:5000";
  expect_only(cfg, "interfaces[0].address", "tcp://239.0.0.1:5000", "a multicast group needs udp://");
}

TEST_F(ConfigValidate, OtherEnginesSkipSocketChecks) {
  test::ensure_engine("test-engine");
  eth0().engine = "test-engine";
  eth0().address = "veth1";
  eth0().tx.destination.clear();
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigValidate, Ranges) {
  cfg.memory_regions[0].buf_size = 63;
  cfg.memory_regions[0].num_bufs = (1u << 30) + 1;
  rx0().batch_size = 1025;
  rx0().timeout_us = 10'000'001;
  rx0().ring_depth = 65537;
  rx0().cpu_core = -2;
  netdaq::cli::run_block(cfg).tx_payload_size = 23;
  netdaq::cli::run_block(cfg).stats_interval_ms = 9;
  netdaq::cli::run_block(cfg).duration_s = -0.5;
  const auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 9u);
  expect_issue(issues, "<c++>", 0, 0, "memory_regions[0].buf_size", "63", "must be an integer 64..1048576");
  expect_issue(issues, "<c++>", 0, 0, "memory_regions[0].num_bufs", "1073741825", "must be an integer 1..1073741824");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rx.queues[0].batch_size", "1025", "must be an integer 1..1024");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rx.queues[0].timeout_us", "10000001",
               "must be an integer 0..10000000");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rx.queues[0].ring_depth", "65537", "must be an integer 1..65536");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rx.queues[0].cpu_core", "-2", "must be an integer -1..1023");
  expect_issue(issues, "<c++>", 0, 0, "run.tx_payload_size", "23", "must be an integer 24..65507");
  expect_issue(issues, "<c++>", 0, 0, "run.stats_interval_ms", "9", "must be an integer 10..4294967295");
  expect_issue(issues, "<c++>", 0, 0, "run.duration_s", "-0.5", "must be a number >= 0 (0 = until Ctrl-C)");
}

TEST_F(ConfigValidate, RangeLimitsAreInclusive) {
  cfg.memory_regions[0].buf_size = 1 << 20;
  cfg.memory_regions[0].num_bufs = 1 << 30;
  rx0().batch_size = 1024;
  rx0().ring_depth = 1;
  rx0().timeout_us = 10'000'000;
  rx0().cpu_core = 1023;
  netdaq::cli::run_block(cfg).tx_payload_size = 65507;
  netdaq::cli::run_block(cfg).stats_interval_ms = 10;
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigValidate, PacingRates) {
  eth0().tx.rate_mbps = 100;
  eth0().tx.rate_pps = 1000;
  expect_only(cfg, "interfaces[0].tx.rate_pps", "1000", "set at most one of rate_mbps and rate_pps (rate_mbps is 100)");
  eth0().tx.rate_pps = 0;
  eth0().tx.rate_mbps = -1;
  expect_only(cfg, "interfaces[0].tx.rate_mbps", "-1", "must be a number >= 0 (0 = unpaced)");
}

TEST_F(ConfigValidate, PayloadSizeFitsTheSmallestTxRegion) {
  cfg.memory_regions.push_back({.name = "small", .buf_size = 1024, .num_bufs = 8192});
  eth0().tx.queues.push_back({.id = 1, .memory_regions = {"small"}});
  // The library ignores `run`: its default payload size does not invalidate the config.
  EXPECT_TRUE(cfg.validate().empty());
  netdaq::cli::run_block(cfg).tx_payload_size = 1400;
  expect_only(cfg, "run.tx_payload_size", "1400",
              "must be <= 1024, the buf_size of region 'small' used by tx queue eth0/tx1");
  netdaq::cli::run_block(cfg).tx_payload_size = 1024;
  EXPECT_TRUE(cfg.validate().empty());
  // Written in a file, even the default value is checked.
  const auto issues = test::parse_issues(R"(memory_regions: [{name: small, buf_size: 1024}]
interfaces:
  - {name: out, tx: {destination: "udp://127.0.0.1:9", queues: [{memory_regions: [small]}]}}
run: {tx_payload_size: 1472}
)");
  ASSERT_EQ(issues.size(), 1u);
  expect_issue(issues, "test.yaml", 4, 7, "run.tx_payload_size", "1472", "must be <= 1024");
}

TEST_F(ConfigValidate, EnumValues) {
  eth0().engine = "rdam";
  expect_only(cfg, "interfaces[0].engine", "rdam", "must be one of: socket, afxdp, dpdk, rdma, pcap (did you mean 'rdma'?)");
  cfg = valid();
  cfg.log.level = "warning";
  expect_only(cfg, "log.level", "warning",
              "must be one of: trace, debug, info, warn, error, off (did you mean 'warn'?)");
  cfg = valid();
  cfg.memory_regions[0].kind = static_cast<MemoryKind>(9);
  expect_only(cfg, "memory_regions[0].kind", "9", "must be one of: host, huge, pinned, mapped, device");
  cfg = valid();
  rx0().mode = static_cast<PollMode>(7);
  expect_only(cfg, "interfaces[0].rx.queues[0].mode", "7", "must be one of: direct, worker");
}

TEST_F(ConfigValidate, EngineNotBuiltIn) {
  const auto built = netdaq::engines();
  for (const char* name : {"afxdp", "dpdk", "rdma"}) {
    if (std::find(built.begin(), built.end(), name) != built.end()) continue;
    cfg = valid();
    eth0().engine = name;
    if (std::string(name) == "afxdp") {  // its own rules still apply: make it a valid afxdp interface
      eth0().address = "eth0";
      cfg.memory_regions[0].num_bufs = 16384;
    }
    if (std::string(name) == "dpdk") {  // likewise: a PCI device, and no tx queue sharing the rx pool
      eth0().address = "0000:3b:00.0";
      eth0().tx.queues.clear();
    }
    const auto issues = cfg.validate();
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].key, "interfaces[0].engine");
    EXPECT_NE(issues[0].message.find(std::string("engine '") + name + "' is not built into this netdaq (built in: "),
              std::string::npos);
    EXPECT_NE(issues[0].message.find("socket"), std::string::npos);
  }
}

TEST_F(ConfigValidate, GpuKindsNeedAGpu) {
  for (MemoryKind k : {MemoryKind::pinned, MemoryKind::mapped, MemoryKind::device}) {
    cfg = valid();
    cfg.memory_regions.push_back({.name = "g", .kind = k});
    expect_only(cfg, "memory_regions[1].gpu", "-1",
                std::string("is required for kind ") + to_string(k) + ": must be a GPU index >= 0");
    cfg.memory_regions[1].gpu = 0;
    EXPECT_TRUE(cfg.validate().empty());
  }
  cfg.memory_regions[1].gpu = -3;
  EXPECT_EQ(cfg.validate().size(), 2u);  // below -1, and no GPU for a GPU kind
}

TEST_F(ConfigValidate, RegionReferences) {
  cfg.memory_regions[0].num_bufs = 1 << 20;  // room for any of the queue layouts below
  rx0().memory_regions = {"pol"};
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions[0]", "pol",
              "is not a defined memory region (did you mean 'pool'?); defined: pool");
  rx0().memory_regions = {};
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions", "",
              "must name 1 memory region, or 2 for header-data split (has 0)");
  cfg.memory_regions.push_back({.name = "hdr", .buf_size = 64, .num_bufs = 8192});
  rx0().memory_regions = {"hdr", "pool", "pool"};
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions", "hdr, pool, pool", "(has 3)");
  rx0().memory_regions = {"hdr", "pool"};
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigValidate, Duplicates) {
  cfg.memory_regions.push_back(cfg.memory_regions[0]);
  cfg.interfaces.push_back(cfg.interfaces[0]);
  cfg.interfaces[1].rx.queues.push_back(cfg.interfaces[1].rx.queues[0]);
  cfg.interfaces[1].tx.queues.push_back(cfg.interfaces[1].tx.queues[0]);
  cfg.interfaces[1].rx.flows = {{.id = 3}, {.id = 3}};
  const auto issues = cfg.validate();
  expect_issue(issues, "<c++>", 0, 0, "memory_regions[1].name", "pool", "duplicate region name (also memory_regions[0])");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[1].name", "eth0", "duplicate interface name (also interfaces[0])");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[1].rx.queues[1].id", "0",
               "duplicate queue id (also interfaces[1].rx.queues[0])");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[1].tx.queues[1].id", "0",
               "duplicate queue id (also interfaces[1].tx.queues[0])");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[1].rx.flows[1].id", "3",
               "duplicate flow id (also interfaces[1].rx.flows[0])");
  // An rx and a tx queue may share an id; so may flows of different interfaces.
  EXPECT_EQ(test::find_issue(issues, "interfaces[0].tx.queues[0].id"), nullptr);
}

TEST_F(ConfigValidate, Flows) {
  eth0().rx.flows.push_back({.id = 0, .match = {.udp_src = 100, .udp_src_end = 99}, .queue = 0});
  expect_only(cfg, "interfaces[0].rx.flows[0].match.udp_src", "100-99", "the range ends (99) before it starts (100)");
  eth0().rx.flows[0] = {.id = 0, .match = {.udp_dst_end = 99}, .queue = 0};
  expect_only(cfg, "interfaces[0].rx.flows[0].match.udp_dst_end", "99", "a range end needs a start: set udp_dst");
  eth0().rx.flows[0] = {.id = 0, .match = {.ip_src = "10.1.2", .ip_dst = "fe80::1"}, .queue = 0};
  expect_only(cfg, "interfaces[0].rx.flows[0].match.ip_src", "10.1.2", "must be an IPv4 or IPv6 address");
  eth0().rx.flows[0] = {.id = 0, .match = {.vlan = 4096}, .queue = 0};
  expect_only(cfg, "interfaces[0].rx.flows[0].match.vlan", "4096", "must be an integer 0..4095");
  eth0().rx.flows[0] = {.id = 0, .queue = 2};
  expect_only(cfg, "interfaces[0].rx.flows[0].queue", "2", "must be an rx queue id of this interface: 0");
  eth0().rx.queues.clear();
  expect_only(cfg, "interfaces[0].rx.flows[0].queue", "2", "which has no rx queues");
}

TEST_F(ConfigValidate, Multicast) {
  eth0().options.get<SocketOptions>().multicast_interface = "eth1";
  expect_only(cfg, "interfaces[0].socket.multicast_interface", "eth1",
              "is only allowed when address or tx.destination is a multicast group (e.g. udp://239.1.2.3:5000)");
  eth0().address = "udp://239.1.2.3:5000";
  EXPECT_TRUE(cfg.validate().empty());
  eth0().address = "udp://[ff02::1]:5000";
  EXPECT_TRUE(cfg.validate().empty());
  // Sending to a group out of a chosen interface is the other legitimate use.
  eth0().address = "udp://0.0.0.0:5000";
  eth0().tx.destination = "udp://239.1.2.3:5000";
  eth0().tx.queues = eth0().rx.queues;
  EXPECT_TRUE(cfg.validate().empty()) << cfg.validate().front().to_string();
}

TEST_F(ConfigValidate, TcpMessageFitsThePayloadRegion) {
  cfg.memory_regions.push_back({.name = "hdr", .buf_size = 64, .num_bufs = 8192});
  eth0().address = "tcp://0.0.0.0:7000";
  rx0().memory_regions = {"hdr", "pool"};
  eth0().options.get<SocketOptions>().tcp_max_message = 4096;
  expect_only(cfg, "interfaces[0].socket.tcp_max_message", "4096",
              "must be <= 2048, the buf_size of region 'pool' (payload region of rx queue eth0/rx0)");
  eth0().options.get<SocketOptions>().tcp_max_message = 2048;
  EXPECT_TRUE(cfg.validate().empty());
  eth0().address = "udp://0.0.0.0:7000";  // only TCP has messages
  eth0().options.get<SocketOptions>().tcp_max_message = 4096;
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigValidate, SocketEngineNeedsCpuMemory) {
  cfg.memory_regions.push_back({.name = "gpu", .kind = MemoryKind::device, .buf_size = 2048, .num_bufs = 8192, .gpu = 0});
  eth0().tx.queues[0].memory_regions = {"gpu"};
  expect_only(cfg, "interfaces[0].tx.queues[0].memory_regions[0]", "gpu",
              "region 'gpu' is device memory; the socket engine needs CPU-accessible memory (kind host, huge, pinned "
              "or mapped)");
  cfg.memory_regions[1].kind = MemoryKind::mapped;
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigValidate, PoolTooSmallNamesEveryQueueAndTheNumbers) {
  cfg.memory_regions[0].num_bufs = 8000;
  rx0().mode = PollMode::worker;
  rx0().ring_depth = 64;
  rx0().batch_size = 64;
  eth0().rx.queues.push_back({.id = 1, .name = "side", .batch_size = 32, .ring_depth = 64, .memory_regions = {"pool"}});
  eth0().tx.queues[0].batch_size = 32;
  eth0().tx.queues[0].ring_depth = 64;
  expect_only(cfg, "memory_regions[0].num_bufs", "8000",
              "pool 'pool' is too small: its queues can hold 8256 buffers at once: "
              "eth0/rx0 (rx worker: (ring_depth 64 + 1) x batch_size 64 = 4160), "
              "side (rx direct: ring_depth 64 x batch_size 32 = 2048), "
              "eth0/tx0 (tx: ring_depth 64 x batch_size 32 = 2048); "
              "num_bufs must be at least 8256 (or lower ring_depth / batch_size)");
  cfg.memory_regions[0].num_bufs = 8256;  // exactly enough
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigValidate, PoolBudgetCountsEachRegionOfAQueue) {
  cfg.memory_regions.push_back({.name = "hdr", .buf_size = 64, .num_bufs = 4000});
  rx0().memory_regions = {"hdr", "pool"};  // defaults: direct, 64 x 64 from each region
  const auto budgets = detail::pool_budgets(cfg);
  ASSERT_EQ(budgets.size(), 2u);
  EXPECT_EQ(budgets[0].total, 8192u);  // pool: rx0 and tx0
  ASSERT_EQ(budgets[0].users.size(), 2u);
  EXPECT_TRUE(budgets[0].users[0].rx);
  EXPECT_FALSE(budgets[0].users[1].rx);
  EXPECT_TRUE(budgets[0].fits());
  EXPECT_EQ(budgets[1].total, 4096u);  // hdr: rx0 only
  EXPECT_FALSE(budgets[1].fits());
  expect_only(cfg, "memory_regions[1].num_bufs", "4000", "num_bufs must be at least 4096");
}

TEST_F(ConfigValidate, BuffersHeld) {
  QueueConfig q{.batch_size = 32, .ring_depth = 16};
  EXPECT_EQ(detail::buffers_held(q, true), 512u);   // rx direct
  EXPECT_EQ(detail::buffers_held(q, false), 512u);  // tx
  q.mode = PollMode::worker;
  EXPECT_EQ(detail::buffers_held(q, true), 544u);   // rx worker: one more burst being filled
  EXPECT_EQ(detail::buffers_held(q, false), 512u);  // tx ignores the mode
  q.ring_depth = UINT32_MAX;
  q.batch_size = UINT32_MAX;
  EXPECT_EQ(detail::buffers_held(q, true), (uint64_t{UINT32_MAX} + 1) * UINT32_MAX);
}

TEST_F(ConfigValidate, ReportsEveryIssueAtOnce) {
  cfg.memory_regions.push_back({.name = "pool"});
  eth0().engine = "afxdpp";
  rx0().batch_size = 0;
  rx0().memory_regions = {"nope"};
  cfg.log.level = "loud";
  const auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 5u);
  EXPECT_EQ(issues[0].key, "memory_regions[1].name");
  EXPECT_EQ(issues[1].key, "interfaces[0].engine");
  EXPECT_EQ(issues[2].key, "interfaces[0].rx.queues[0].batch_size");
  EXPECT_EQ(issues[3].key, "interfaces[0].rx.queues[0].memory_regions[0]");
  EXPECT_EQ(issues[4].key, "log.level");
}

TEST_F(ConfigValidate, LoadedFileReportsEveryValidationError) {
  const std::string f = config_data("validate_errors.yaml");
  const auto issues = test::issues_of([&] { Config::load(f); });
  // interfaces[1] (engine dpdk, no address) is also 'not built into this netdaq' where it is not.
  const auto built = netdaq::engines();
  const bool dpdk_built = std::find(built.begin(), built.end(), "dpdk") != built.end();
  EXPECT_EQ(issues.size(), dpdk_built ? 39u : 40u);
  expect_issue(issues, f, 2, 31, "memory_regions[0].buf_size", "32", "must be an integer 64..1048576");
  expect_issue(issues, f, 3, 6, "memory_regions[1].name", "small", "duplicate region name");
  expect_issue(issues, f, 3, 5, "memory_regions[1].gpu", "-1", "is required for kind device");  // at the region
  expect_issue(issues, f, 5, 5, "memory_regions[3].name", "", "is required");
  expect_issue(issues, f, 8, 5, "interfaces[0].engine", "sockte", "(did you mean 'socket'?)");
  expect_issue(issues, f, 9, 5, "interfaces[1].name", "eth0", "duplicate interface name");
  expect_issue(issues, f, 9, 5, "interfaces[1].address", "", "is required for the dpdk engine: a PCI address");
  expect_issue(issues, f, 13, 5, "interfaces[2].address", "udp://10.0.0.1:99999", "port must be a number 0..65535");
  expect_issue(issues, f, 16, 19, "interfaces[2].rx.queues[0].batch_size", "2000", "must be an integer 1..1024");
  expect_issue(issues, f, 16, 90, "interfaces[2].rx.queues[0].memory_regions", "", "(has 0)");
  expect_issue(issues, f, 17, 12, "interfaces[2].rx.queues[1].id", "0", "duplicate queue id");
  expect_issue(issues, f, 17, 36, "interfaces[2].rx.queues[1].memory_regions[0]", "payload",
               "is not a defined memory region; defined: small, gpu_buf");
  expect_issue(issues, f, 18, 36, "interfaces[2].rx.queues[2].memory_regions[0]", "gpu_buf", "is device memory");
  expect_issue(issues, f, 20, 19, "interfaces[2].rx.flows[0].queue", "5", "must be an rx queue id of this interface: 0, 1");
  expect_issue(issues, f, 20, 37, "interfaces[2].rx.flows[0].match.udp_src", "300-200", "the range ends");
  expect_issue(issues, f, 20, 57, "interfaces[2].rx.flows[0].match.ip_src", "10.0.0.300", "IPv4 or IPv6");
  expect_issue(issues, f, 21, 12, "interfaces[2].rx.flows[1].id", "7", "duplicate flow id");
  expect_issue(issues, f, 22, 5, "interfaces[2].tx.destination", "", "is required");  // at tx
  expect_issue(issues, f, 26, 7, "interfaces[2].tx.rate_pps", "-1", "must be a number >= 0");
  expect_issue(issues, f, 28, 7, "interfaces[2].socket.multicast_interface", "eth1", "multicast group");
  expect_issue(issues, f, 39, 7, "interfaces[3].socket.tcp_max_message", "65536", "must be <= 4096");
  expect_issue(issues, f, 40, 5, "interfaces[4].address", "", "is required for the socket engine");
  expect_issue(issues, f, 45, 3, "run.tx_payload_size", "16", "must be an integer 24..65507");
  expect_issue(issues, f, 49, 3, "log.level", "verbose", "must be one of: trace, debug, info, warn, error, off");
}

TEST_F(ConfigValidate, LoadedPoolTooSmall) {
  const std::string f = config_data("pool_too_small.yaml");
  const auto issues = test::issues_of([&] { Config::load(f); });
  ASSERT_EQ(issues.size(), 1u);
  expect_issue(issues, f, 2, 46, "memory_regions[0].num_bufs", "8192",
               "its queues can hold 8256 buffers at once: sensor0/rx0 (rx worker: (ring_depth 64 + 1) x batch_size "
               "64 = 4160), sensor0/rx1 (rx direct: ring_depth 64 x batch_size 32 = 2048), sensor0/tx0 (tx: "
               "ring_depth 64 x batch_size 32 = 2048); num_bufs must be at least 8256");
}

}  // namespace
}  // namespace netdaq
