// Configuration of the dpdk engine: the dpdk: keys of an interface, a flow's queues (RSS), the
// eal: section, and every rule the validator applies to them (config_validate_dpdk.cpp,
// config_validate_flows.cpp, config_validate_engine_options.cpp, and the NIC's buffers in the
// pool budget).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "config_test_util.h"
#include "run_block.h"
#include "core/config_limits.h"
#include "engines/dpdk/limits.h"
#include "core/pool_budget.h"
#include "netdaq/config.h"
#include "test_paths.h"

namespace netdaq {
namespace {

using test::expect_issue;
using test::expect_only;
using test::find_issue;
using test::parse_issues;

class ConfigDpdk : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ensure_socket_engine();
    test::ensure_engine("afxdp");
    test::ensure_engine("dpdk");
  }

  // A valid dpdk interface: one rx queue (and a flow) and one tx queue, each with its region.
  // Pool budget: rx 64 x 64 + rx_desc 1024 + mempool_cache 256 = 5376 <= 8192;
  // tx 64 x 64 + tx_desc 1024 = 5120 <= 8192.
  static Config valid() {
    Config c;
    c.memory_regions.push_back({.name = "rx", .buf_size = 2048, .num_bufs = 8192});
    c.memory_regions.push_back({.name = "tx", .buf_size = 2048, .num_bufs = 8192});
    InterfaceConfig i;
    i.name = "port";
    i.engine = "dpdk";
    i.address = "0000:3b:00.0";
    i.rx.queues.push_back({.id = 0, .memory_regions = {"rx"}});
    i.rx.flows.push_back({.id = 0, .match = {.udp_dst = 5000}, .queue = 0});
    i.tx.queues.push_back({.id = 0, .memory_regions = {"tx"}});
    i.tx.destination = "udp://10.0.0.2:5000";
    i.options.get<DpdkOptions>().dst_mac = "02:00:00:00:00:02";
    i.options.get<DpdkOptions>().src_ip = "10.0.0.1";
    c.interfaces.push_back(i);
    return c;
  }

  // A socket interface of its own region, for rules between interfaces.
  static InterfaceConfig socket_interface(const std::string& region) {
    InterfaceConfig s;
    s.name = "sock";
    s.address = "udp://0.0.0.0:6000";
    s.rx.queues.push_back({.id = 0, .memory_regions = {region}});
    return s;
  }

  InterfaceConfig& iface() { return cfg.interfaces[0]; }
  DpdkOptions& dpdk() { return cfg.interfaces[0].options.get<DpdkOptions>(); }
  MemoryRegionConfig& rx_region() { return cfg.memory_regions[0]; }

  void expect_valid() {
    const auto issues = cfg.validate();
    EXPECT_TRUE(issues.empty()) << issues[0].to_string();
  }

  Config cfg = valid();
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every dpdk and eal key, none at its default (also a fuzz seed).
std::string every_key_yaml() { return read_text(test::config_data("dpdk.yaml")); }

TEST_F(ConfigDpdk, ValidCxxConfigPasses) { expect_valid(); }

TEST_F(ConfigDpdk, LoopbackNames) {
  EXPECT_STREQ(to_string(DpdkLoopback::none), "none");
  EXPECT_STREQ(to_string(DpdkLoopback::software), "software");
  EXPECT_STREQ(to_string(DpdkLoopback::hardware), "hardware");
}

TEST_F(ConfigDpdk, EveryKeyRoundTrips) {
  const std::string every_key = every_key_yaml();
  const Config c = Config::parse(every_key, "every.yaml");
  const InterfaceConfig& i = c.interfaces.at(0);
  EXPECT_EQ(i.engine, "dpdk");
  EXPECT_EQ(i.address, "0000:3b:00.1");
  const DpdkOptions& d = i.options.get<DpdkOptions>();
  EXPECT_EQ(d.rx_desc, 2048);
  EXPECT_EQ(d.tx_desc, 512);
  EXPECT_EQ(d.mtu, 9000u);
  EXPECT_FALSE(d.promiscuous);
  EXPECT_TRUE(d.isolate);
  EXPECT_EQ(d.loopback, DpdkLoopback::hardware);
  EXPECT_FALSE(d.tx_checksum_offload);
  EXPECT_EQ(d.mempool_cache, 128u);
  EXPECT_EQ(d.dst_mac, "02:00:00:00:00:01");
  EXPECT_EQ(d.src_ip, "10.0.0.2");
  EXPECT_EQ(d.src_port, 4000);
  ASSERT_EQ(i.rx.flows.size(), 2u);
  EXPECT_TRUE(i.rx.flows[0].queues.empty());
  EXPECT_EQ(i.rx.flows[0].queue, 1);
  EXPECT_EQ(i.rx.flows[1].queues, (std::vector<uint16_t>{0, 1}));
  const EalConfig& e = c.options.get<EalConfig>();
  EXPECT_EQ(e.cores, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(e.main_core, 1);
  EXPECT_FALSE(e.hugepages);
  EXPECT_EQ(e.memory_mb, 1024u);
  EXPECT_EQ(e.file_prefix, "netdaq-test_1");
  EXPECT_EQ(e.allow, (std::vector<std::string>{"0000:3b:00.0"}));
  EXPECT_EQ(e.vdevs, (std::vector<std::string>{"net_null0,size=64"}));
  EXPECT_EQ(e.args, (std::vector<std::string>{"--log-level=pmd,8", "--iova-mode=va"}));

  // Every key has its location (file:line:column).
  const auto& at = c.locations;
  EXPECT_EQ(at.at("interfaces[0].dpdk").line, 20);
  EXPECT_EQ(at.at("interfaces[0].dpdk.rx_desc").line, 21);
  EXPECT_EQ(at.at("interfaces[0].dpdk.rx_desc").column, 7);
  EXPECT_EQ(at.at("interfaces[0].dpdk.src_port").line, 31);
  EXPECT_EQ(at.at("interfaces[0].rx.flows[1].queues").line, 16);
  EXPECT_EQ(at.at("interfaces[0].rx.flows[1].queues").column, 19);
  EXPECT_EQ(at.at("interfaces[0].rx.flows[1].queues[1]").column, 31);
  EXPECT_EQ(at.at("eal").line, 32);
  EXPECT_EQ(at.at("eal").column, 1);
  EXPECT_EQ(at.at("eal.cores[2]").line, 33);
  EXPECT_EQ(at.at("eal.cores[2]").column, 17);
  EXPECT_EQ(at.at("eal.args[1]").line, 40);
  EXPECT_EQ(at.at("eal.args[1]").file, "every.yaml");
  for (const char* key : {"tx_desc", "mtu", "promiscuous", "isolate", "loopback", "tx_checksum_offload",
                          "mempool_cache", "dst_mac", "src_ip"})
    EXPECT_EQ(at.count(std::string("interfaces[0].dpdk.") + key), 1u) << key;
  for (const char* key : {"main_core", "hugepages", "memory_mb", "file_prefix", "allow[0]", "vdevs[0]", "args[0]"})
    EXPECT_EQ(at.count(std::string("eal.") + key), 1u) << key;

  // The names read back: to_string of each value parses to the same value.
  for (DpdkLoopback v : {DpdkLoopback::none, DpdkLoopback::software, DpdkLoopback::hardware}) {
    std::string yaml = every_key;
    yaml.replace(yaml.find("loopback: hardware"), 18, std::string("loopback: ") + to_string(v));
    EXPECT_EQ(Config::parse(yaml).interfaces[0].options.get<DpdkOptions>().loopback, v) << to_string(v);
  }
}

TEST_F(ConfigDpdk, DefaultsWhenNotWritten) {
  const Config c = Config::parse(R"(memory_regions: [{name: bufs}]
interfaces:
  - {name: p, engine: dpdk, address: net_null0, rx: {queues: [{memory_regions: [bufs]}]}, dpdk: {}}
eal: {}
)");
  const DpdkOptions& d = c.interfaces[0].options.get<DpdkOptions>();
  EXPECT_EQ(d.rx_desc, 1024);
  EXPECT_EQ(d.tx_desc, 1024);
  EXPECT_EQ(d.mtu, 0u);
  EXPECT_TRUE(d.promiscuous);
  EXPECT_FALSE(d.isolate);
  EXPECT_EQ(d.loopback, DpdkLoopback::none);
  EXPECT_TRUE(d.tx_checksum_offload);
  EXPECT_EQ(d.mempool_cache, 256u);
  EXPECT_EQ(d.dst_mac, "");
  EXPECT_EQ(d.src_ip, "");
  EXPECT_EQ(d.src_port, 0);
  const EalConfig& e = c.options.get<EalConfig>();
  EXPECT_TRUE(e.cores.empty());
  EXPECT_EQ(e.main_core, -1);
  EXPECT_TRUE(e.hugepages);
  EXPECT_EQ(e.memory_mb, 256u);
  EXPECT_EQ(e.file_prefix, "");
  EXPECT_TRUE(e.allow.empty() && e.vdevs.empty() && e.args.empty());
}

TEST_F(ConfigDpdk, ExamplesValidate) {
  const Config loop = Config::load(std::string(NETDAQ_SOURCE_DIR) + "/examples/dpdk-loopback.yaml");
  ASSERT_EQ(loop.interfaces.size(), 1u);
  EXPECT_EQ(loop.interfaces[0].engine, "dpdk");
  EXPECT_EQ(loop.interfaces[0].address, "net_ring0");
  EXPECT_FALSE(loop.options.get<EalConfig>().hugepages);
  EXPECT_EQ(netdaq::cli::run_block(loop).tx_packets, 100000u);

  const Config rx = Config::load(std::string(NETDAQ_SOURCE_DIR) + "/examples/dpdk-rx.yaml");
  ASSERT_EQ(rx.interfaces.size(), 1u);
  const InterfaceConfig& i = rx.interfaces[0];
  EXPECT_EQ(i.address, "0000:3b:00.0");
  EXPECT_TRUE(i.options.get<DpdkOptions>().isolate);
  ASSERT_EQ(i.rx.queues.size(), 2u);
  EXPECT_EQ(i.rx.queues[1].mode, PollMode::worker);
  EXPECT_EQ(i.rx.queues[0].memory_regions.size(), 2u);
  EXPECT_EQ(rx.find_region(i.rx.queues[0].memory_regions[1])->kind, MemoryKind::device);
  ASSERT_EQ(i.rx.flows.size(), 2u);
  EXPECT_EQ(i.rx.flows[1].queues, (std::vector<uint16_t>{0, 1}));
}

TEST_F(ConfigDpdk, LoadErrors) {
  const std::string yaml = R"(memory_regions: [{name: bufs}]
interfaces:
  - name: p
    engine: dpdk
    address: net_null0
    rx:
      queues: [{memory_regions: [bufs]}]
      flows: [{queues: [0, x]}, {id: 1, queues: 1}]
    dpdk:
      rx_dsc: 512
      rx_desc: 70000
      loopback: sofware
      isolate: 1
      mempool_cache: -1
      mtu: big
  - {name: q, engine: dpdk, address: net_null1, dpdk: [1]}
eal:
  cores: [0, 1024, a]
  main_core: -2
  hugepages: maybe
  memory_mb: 1
  allow: 0000:3b:00.0
  vdevs: [{a: 1}]
  argz: []
)";
  const auto issues = parse_issues(yaml, "dpdk.yaml");
  ASSERT_EQ(issues.size(), 17u) << issues[0].to_string();
  expect_issue(issues, "dpdk.yaml", 8, 28, "interfaces[0].rx.flows[0].queues[1]", "x", "must be an integer 0..65535");
  expect_issue(issues, "dpdk.yaml", 8, 41, "interfaces[0].rx.flows[1].queues", "1", "must be a list of rx queue ids");
  expect_issue(issues, "dpdk.yaml", 10, 7, "interfaces[0].dpdk.rx_dsc", "512", "unknown key (did you mean 'rx_desc'?)");
  expect_issue(issues, "dpdk.yaml", 11, 7, "interfaces[0].dpdk.rx_desc", "70000", "must be an integer 64..32768");
  expect_issue(issues, "dpdk.yaml", 12, 7, "interfaces[0].dpdk.loopback", "sofware",
               "must be one of: none, software, hardware (did you mean 'software'?)");
  expect_issue(issues, "dpdk.yaml", 13, 7, "interfaces[0].dpdk.isolate", "1", "must be true or false");
  expect_issue(issues, "dpdk.yaml", 14, 7, "interfaces[0].dpdk.mempool_cache", "-1", "must be an integer 0..512");
  expect_issue(issues, "dpdk.yaml", 15, 7, "interfaces[0].dpdk.mtu", "big", "must be an integer 0..4294967295");
  expect_issue(issues, "dpdk.yaml", 16, 49, "interfaces[1].dpdk", "",
               "must be a map with keys: rx_desc, tx_desc, mtu, promiscuous, isolate, loopback, tx_checksum_offload, "
               "mempool_cache, raw_frames, dst_mac, src_ip, src_port");
  expect_issue(issues, "dpdk.yaml", 18, 20, "eal.cores[2]", "a", "must be an integer 0..1023");
  expect_issue(issues, "dpdk.yaml", 19, 3, "eal.main_core", "-2", "must be an integer -1..1023");
  expect_issue(issues, "dpdk.yaml", 20, 3, "eal.hugepages", "maybe", "must be true or false");
  expect_issue(issues, "dpdk.yaml", 22, 3, "eal.allow", "0000:3b:00.0", "must be a list of PCI addresses");
  expect_issue(issues, "dpdk.yaml", 23, 11, "eal.vdevs[0]", "", "must be a string, not a map");
  expect_issue(issues, "dpdk.yaml", 24, 3, "eal.argz", "", "unknown key (did you mean 'args'?)");
  // Values that fit the field but not the rules are the validator's, at the same place.
  expect_issue(issues, "dpdk.yaml", 18, 14, "eal.cores[1]", "1024", "must be an integer 0..1023");
  expect_issue(issues, "dpdk.yaml", 21, 3, "eal.memory_mb", "1", "must be an integer 16..1048576");
}

TEST_F(ConfigDpdk, UnknownKeysSuggestTheNewSections) {
  const std::pair<const char*, const char*> cases[] = {
      {"interfaces: [{name: s, dpkd: {}}]\n", "interfaces[0].dpkd"},
      {"interfaces: [{name: s}]\neall: {}\n", "eall"},
      {"interfaces: [{name: s, rx: {flows: [{qeues: [0, 1]}]}}]\n", "interfaces[0].rx.flows[0].qeues"},
      {"interfaces: [{name: s}]\neal: {core: [1]}\n", "eal.core"},
      {"interfaces: [{name: s, dpdk: {promiscous: true}}]\n", "interfaces[0].dpdk.promiscous"},
  };
  const char* expected[] = {"dpdk", "eal", "queues", "cores", "promiscuous"};
  for (size_t n = 0; n < std::size(cases); ++n) {
    const auto issues = parse_issues(cases[n].first);
    const ConfigIssue* i = find_issue(issues, cases[n].second);
    ASSERT_NE(i, nullptr) << cases[n].second;
    EXPECT_EQ(i->message, std::string("unknown key (did you mean '") + expected[n] + "'?)");
  }
}

TEST_F(ConfigDpdk, AddressIsAPciAddressOrAVdev) {
  iface().address.clear();
  expect_only(cfg, "interfaces[0].address", "",
              "is required for the dpdk engine: a PCI address (0000:3b:00.0 or 3b:00.0: DDDD:BB:DD.F in hex, function "
              "0..7), or a DPDK virtual device net_<driver><n>, optionally followed by ,key=value arguments (e.g. "
              "net_ring0, net_af_xdp0,iface=veth1,start_queue=0, net_tap0,iface=dtap0)");
  for (const char* bad : {"eth0", "udp://0.0.0.0:5000", "3b:00.8", "0000:3b:00", "0000:3b:0.0", "000:3b:00.0",
                          "0000:3g:00.0", "0000-3b:00.0", "net_", "net_ring0 ", "ring0", "eth_ring0", "net-ring0",
                          "net_ring0,", "net_ring0,iface", "net_ring0,=x", "net_ring0,a=", "net_tap0,iface=a b"}) {
    iface().address = bad;
    expect_only(cfg, "interfaces[0].address", bad,
                "must be a PCI address (0000:3b:00.0 or 3b:00.0: DDDD:BB:DD.F in hex, function 0..7), or a DPDK "
                "virtual device net_<driver><n>");
  }
  iface().address = "net_af_xdp0,iface=veth1,,start_queue=0";
  expect_only(cfg, "interfaces[0].address", iface().address, "; argument '' is not key=value");
  iface().address = "net_" + std::string(60, 'a');
  expect_only(cfg, "interfaces[0].address", iface().address, "is longer than 63 characters");
  for (const char* good : {"0000:3b:00.0", "3b:00.0", "0000:AF:1f.7", "ffff:00:00.1", "net_null0", "net_ring0",
                           "net_af_xdp0,iface=veth1,start_queue=0", "net_tap0,iface=dtap0",
                           "net_pcap0,rx_pcap=/tmp/in.pcap,tx_pcap=/tmp/out.pcap"}) {
    iface().address = good;
    EXPECT_TRUE(cfg.validate().empty()) << good << ": " << cfg.validate()[0].to_string();
  }
  iface().address = "net_" + std::string(59, 'a');  // 63 characters
  expect_valid();
}

TEST_F(ConfigDpdk, OneInterfacePerDevice) {
  cfg.memory_regions.push_back({.name = "rx2", .buf_size = 2048, .num_bufs = 8192});
  InterfaceConfig second;
  second.name = "port2";
  second.engine = "dpdk";
  second.address = "3B:00.0";  // the same device, written differently
  second.rx.queues.push_back({.id = 0, .memory_regions = {"rx2"}});
  cfg.interfaces.push_back(second);
  expect_only(cfg, "interfaces[1].address", "3B:00.0",
              "is the same device as interfaces[0] ('port', address 0000:3b:00.0): a DPDK port belongs to one "
              "interface; give that interface all its queues");
  cfg.interfaces[1].address = "0000:3b:00.1";
  expect_valid();
  iface().address = "net_af_xdp0,iface=veth1";
  cfg.interfaces[1].address = "net_af_xdp0,iface=veth2";
  expect_only(cfg, "interfaces[1].address", "net_af_xdp0,iface=veth2", "is the same device as interfaces[0]");
  cfg.interfaces[1].address = "net_af_xdp1,iface=veth2";
  expect_valid();
  // Only dpdk interfaces own devices.
  cfg.interfaces.push_back(socket_interface("rx2"));
  cfg.interfaces[1].rx.queues.clear();
  cfg.interfaces[2].address = "udp://0.0.0.0:6000";
  expect_valid();
}

TEST_F(ConfigDpdk, QueueIdsAreContiguous) {
  iface().rx.queues.push_back({.id = 2, .memory_regions = {"rx"}});
  rx_region().num_bufs = 16384;
  expect_only(cfg, "interfaces[0].rx.queues[1].id", "2",
              "must be 0..1 on a dpdk interface: DPDK numbers a port's 2 rx queues from 0 without gaps (missing: 1)");
  iface().rx.queues[1].id = 1;
  expect_valid();
  iface().tx.queues[0].id = 3;
  expect_only(cfg, "interfaces[0].tx.queues[0].id", "3",
              "must be 0 on a dpdk interface: DPDK numbers a port's 1 tx queue from 0 without gaps (missing: 0)");
  iface().tx.queues[0].id = 0;
  // At most 1024 queues each way.
  Config many = valid();
  many.memory_regions[0].num_bufs = 1u << 30;
  many.interfaces[0].rx.queues.clear();
  for (uint16_t id = 0; id < detail::dpdk_limits::kMaxQueues; ++id)
    many.interfaces[0].rx.queues.push_back({.id = id, .batch_size = 1, .ring_depth = 1, .memory_regions = {"rx"}});
  EXPECT_TRUE(many.validate().empty());
  many.interfaces[0].rx.queues.push_back({.id = 1024, .batch_size = 1, .ring_depth = 1, .memory_regions = {"rx"}});
  expect_only(many, "interfaces[0].rx.queues", "1025 queues",
              "the dpdk engine opens at most 1024 rx queues per port; has 1025");
}

TEST_F(ConfigDpdk, RxRegionsAreCpuReadableExceptTheDataOfASplit) {
  cfg.memory_regions.push_back(
      {.name = "gpu", .kind = MemoryKind::device, .buf_size = 8192, .num_bufs = 8192, .gpu = 0});
  iface().rx.queues[0].memory_regions = {"gpu"};
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions[0]", "gpu",
              "region 'gpu' is device memory; the one region of a dpdk rx queue must be CPU-readable (kind host, huge, "
              "pinned or mapped): the engine reads each packet's headers. To receive payloads into GPU memory, split "
              "headers from data: memory_regions: [<a host region>, gpu]");
  iface().rx.queues[0].memory_regions = {"gpu", "rx"};
  expect_only(
      cfg, "interfaces[0].rx.queues[0].memory_regions[0]", "gpu",
      "the header region (the first of two) of a dpdk rx queue must be CPU-readable (kind host, huge, pinned or "
      "mapped): the engine reads the headers. Only the data region (the second) may be device memory");
  iface().rx.queues[0].memory_regions = {"rx", "gpu"};
  expect_valid();
  for (MemoryKind k : {MemoryKind::huge, MemoryKind::pinned, MemoryKind::mapped}) {
    rx_region().kind = k;
    rx_region().gpu = k == MemoryKind::huge ? -1 : 0;
    iface().rx.queues[0].memory_regions = {"rx"};
    EXPECT_TRUE(cfg.validate().empty()) << to_string(k);
  }
}

TEST_F(ConfigDpdk, RxBuffersHoldTheMbufHeadroom) {
  rx_region().buf_size = 255;
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions[0]", "rx",
              "region 'rx' has buf_size 255; a dpdk rx queue needs buf_size >= 256: each mbuf keeps 128 bytes of "
              "headroom (RTE_PKTMBUF_HEADROOM) in front of the packet");
  // Both regions of a split.
  cfg.memory_regions.push_back({.name = "data", .buf_size = 128, .num_bufs = 8192});
  rx_region().buf_size = 256;
  iface().rx.queues[0].memory_regions = {"rx", "data"};
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions[1]", "data", "has buf_size 128; a dpdk rx queue needs");
  cfg.memory_regions[2].buf_size = 256;
  expect_valid();
  // Raw frames come in one segment.
  dpdk().raw_frames = true;
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions", "rx, data", "dpdk.raw_frames hands over whole frames");
}

TEST_F(ConfigDpdk, MempoolCacheFitsEveryRxRegion) {
  dpdk().mempool_cache = 0;
  rx_region().num_bufs = 5120;  // exactly the pool budget without the cache
  expect_valid();
  // DPDK: cache x 1.5 <= num_bufs. A pool that small needs a small rx_desc and ring too.
  iface().rx.queues[0].ring_depth = 1;
  iface().rx.queues[0].batch_size = 1;
  dpdk().rx_desc = 64;
  rx_region().num_bufs = 400;
  dpdk().mempool_cache = 267;
  expect_only(cfg, "interfaces[0].dpdk.mempool_cache", "267",
              "is too large for region 'rx' (num_bufs 400) of rx queue port/rx0: DPDK needs mempool_cache x 1.5 <= "
              "num_bufs; mempool_cache must be <= 266 (or raise num_bufs)");
  dpdk().mempool_cache = 266;
  expect_valid();
  dpdk().mempool_cache = 513;
  rx_region().num_bufs = 8192;
  expect_only(cfg, "interfaces[0].dpdk.mempool_cache", "513", "must be an integer 0..512");
  dpdk().mempool_cache = 512;
  expect_valid();
}

TEST_F(ConfigDpdk, RxRegionBelongsToOneInterfacesRxQueues) {
  // Another rx queue of the same interface may share it.
  iface().rx.queues.push_back({.id = 1, .memory_regions = {"rx"}});
  rx_region().num_bufs = 16384;
  expect_valid();
  // Its tx queue may not.
  iface().tx.queues[0].memory_regions = {"rx"};
  expect_only(cfg, "interfaces[0].tx.queues[0].memory_regions[0]", "rx",
              "region 'rx' is the buffer pool of dpdk rx queue port/rx0, and the dpdk engine hands all of its buffers "
              "to one DPDK mempool of interface 'port': it can be shared only with rx queues of that interface, not "
              "with tx queue port/tx0; give that queue a region of its own");
  iface().tx.queues[0].memory_regions = {"tx"};
  // Nor another interface's queue, whichever comes first.
  cfg.interfaces.insert(cfg.interfaces.begin(), socket_interface("rx"));
  rx_region().num_bufs = 32768;
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions[0]", "rx",
              "region 'rx' is the buffer pool of dpdk rx queue port/rx0, and the dpdk engine hands all of its buffers "
              "to one DPDK mempool of interface 'port': it can be shared only with rx queues of that interface, not "
              "with rx queue sock/rx0");
  cfg.interfaces.erase(cfg.interfaces.begin());
  InterfaceConfig other = valid().interfaces[0];
  other.name = "port2";
  other.address = "net_null0";
  other.tx.queues.clear();
  cfg.interfaces.push_back(other);
  expect_only(cfg, "interfaces[1].rx.queues[0].memory_regions[0]", "rx",
              "not with rx queue port2/rx0; give that queue a region of its own");
  // Regions of tx queues and of other engines are not the dpdk engine's to own.
  Config sock = valid();
  sock.interfaces[0] = socket_interface("rx");
  sock.interfaces[0].tx.queues.push_back({.id = 0, .memory_regions = {"rx"}});
  sock.interfaces[0].tx.destination = "udp://10.0.0.2:5000";
  EXPECT_TRUE(sock.validate().empty()) << sock.validate()[0].to_string();
}

TEST_F(ConfigDpdk, TxRegion) {
  iface().tx.queues[0].memory_regions = {"tx", "tx"};
  cfg.memory_regions[1].num_bufs = 16384;
  expect_only(cfg, "interfaces[0].tx.queues[0].memory_regions", "tx, tx",
              "a dpdk tx queue takes exactly 1 memory region (has 2): the engine writes the 42 bytes of "
              "Ethernet/IPv4/UDP headers in front of each payload, in the same buffer");
  iface().tx.queues[0].memory_regions = {"tx"};
  cfg.memory_regions[1].kind = MemoryKind::device;
  cfg.memory_regions[1].gpu = 0;
  expect_only(cfg, "interfaces[0].tx.queues[0].memory_regions[0]", "tx",
              "region 'tx' is device memory; a dpdk tx queue needs CPU-writable memory (kind host, huge, pinned or "
              "mapped): the engine writes the headers in front of each payload");
  cfg.memory_regions[1].kind = MemoryKind::pinned;
  expect_valid();
  // Below the smallest buf_size of any region, so reported with it.
  cfg.memory_regions[1].buf_size = 42;
  const auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "<c++>", 0, 0, "memory_regions[1].buf_size", "42", "must be an integer 64..1048576");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].tx.queues[0].memory_regions[0]", "tx",
               "region 'tx' has buf_size 42; a dpdk tx queue needs buf_size >= 43: 42 bytes of Ethernet/IPv4/UDP "
               "headers and the payload");
}

TEST_F(ConfigDpdk, TxNeedsBothEndsSpelledOut) {
  iface().tx.destination.clear();
  dpdk().dst_mac.clear();
  dpdk().src_ip.clear();
  auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 3u);
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].tx.destination", "",
               "is required for the dpdk engine when tx queues are configured: udp://IPv4:PORT (e.g. "
               "udp://10.0.0.2:5000) (optional only with dpdk.loopback: software)");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].dpdk.dst_mac", "",
               "is required for tx on a dpdk interface: the destination MAC address like 02:00:00:00:00:01 (DPDK has "
               "no neighbour table to look it up; optional only with loopback: software)");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].dpdk.src_ip", "",
               "is required for tx on a dpdk interface: the source IPv4 address like 10.0.0.1 (a DPDK port has no "
               "interface address; optional only with loopback: software)");
  // Hardware loopback still puts the frames on the port.
  dpdk().loopback = DpdkLoopback::hardware;
  EXPECT_EQ(cfg.validate().size(), 3u);
  // Software loopback never builds a frame for the wire.
  dpdk().loopback = DpdkLoopback::software;
  expect_valid();
  // No tx queues: nothing to address.
  dpdk().loopback = DpdkLoopback::none;
  iface().tx.queues.clear();
  expect_valid();
}

TEST_F(ConfigDpdk, TxHeaderForms) {
  const std::pair<const char*, const char*> bad_destinations[] = {
      {"tcp://10.0.0.2:5000", "must be udp://IPv4:PORT (e.g. udp://10.0.0.2:5000): the dpdk engine sends UDP only"},
      {"udp://receiver.lan:5000", "with an IP address, not a host name: the dpdk engine writes the IP header itself"},
      {"udp://[fd00::1]:5000",
       "must be udp://IPv4:PORT (e.g. udp://10.0.0.2:5000): the dpdk engine writes IPv4 "
       "headers only"},
      {"udp://239.1.2.3:5000", "must be a unicast address; 239.1.2.3 is a multicast group"},
      {"udp://255.255.255.255:5000", "255.255.255.255 is the broadcast address"},
      {"udp://0.0.0.0:5000", "0.0.0.0 is the unspecified address"},
      {"udp://10.0.0.2:0", "must have a port 1..65535"},
      {"10.0.0.2:5000", "unknown scheme"},
  };
  for (const auto& [url, why] : bad_destinations) {
    iface().tx.destination = url;
    expect_only(cfg, "interfaces[0].tx.destination", url, why);
  }
  iface().tx.destination = "udp://10.0.0.2:5000";
  for (const char* bad : {"02:00:00:00:00:1", "02-00-00-00-00-01", "0200.0000.0001", "02:00:00:00:00:0g"}) {
    dpdk().dst_mac = bad;
    expect_only(cfg, "interfaces[0].dpdk.dst_mac", bad,
                "must be a MAC address like 02:00:00:00:00:01 (six hex bytes separated by ':')");
  }
  dpdk().dst_mac = "AA:bb:CC:dd:EE:ff";
  expect_valid();
  for (const char* bad : {"10.0.0", "fd00::1", "host"}) {
    dpdk().src_ip = bad;
    expect_only(cfg, "interfaces[0].dpdk.src_ip", bad,
                "must be an IPv4 address (e.g. 10.0.0.1): the dpdk engine writes IPv4 headers only");
  }
  // Optional in software loopback, but checked when written.
  dpdk().loopback = DpdkLoopback::software;
  dpdk().src_ip = "fd00::1";
  expect_only(cfg, "interfaces[0].dpdk.src_ip", "fd00::1", "must be an IPv4 address");
  dpdk().src_ip = "10.0.0.1";
  dpdk().src_port = 4000;
  expect_valid();
}

TEST_F(ConfigDpdk, DescriptorsMtuAndModes) {
  rx_region().num_bufs = 1u << 20;  // room for any ring in the pool budget
  cfg.memory_regions[1].num_bufs = 1u << 20;
  for (uint16_t bad : {0, 63, 32769, 65535}) {
    dpdk().rx_desc = bad;
    expect_only(cfg, "interfaces[0].dpdk.rx_desc", std::to_string(bad), "must be an integer 64..32768");
  }
  dpdk().rx_desc = 64;
  dpdk().tx_desc = 40000;
  expect_only(cfg, "interfaces[0].dpdk.tx_desc", "40000", "must be an integer 64..32768");
  dpdk().tx_desc = 2048;
  expect_valid();
  for (uint32_t bad : {1u, 67u, 16001u, 65536u}) {
    dpdk().mtu = bad;
    expect_only(cfg, "interfaces[0].dpdk.mtu", std::to_string(bad), "must be 0 (leave the port's MTU) or 68..16000");
  }
  for (uint32_t good : {0u, 68u, 1500u, 9000u, 16000u}) {
    dpdk().mtu = good;
    expect_valid();
  }
  dpdk().loopback = static_cast<DpdkLoopback>(3);
  expect_only(cfg, "interfaces[0].dpdk.loopback", "3", "must be one of: none, software, hardware");
  dpdk().loopback = DpdkLoopback::hardware;
  dpdk().promiscuous = false;
  dpdk().tx_checksum_offload = false;
  expect_valid();
}

TEST_F(ConfigDpdk, IsolateNeedsAFlow) {
  dpdk().isolate = true;
  expect_valid();
  iface().rx.flows.clear();
  expect_only(cfg, "interfaces[0].dpdk.isolate", "true",
              "needs at least one rx.flows entry: in isolated mode only the flows' packets reach netdaq (the rest goes "
              "to the kernel), so without flows the rx queues would receive nothing");
}

TEST_F(ConfigDpdk, SoftwareLoopbackPairsQueuesById) {
  dpdk().loopback = DpdkLoopback::software;
  expect_valid();
  cfg.memory_regions.push_back({.name = "tx1", .buf_size = 2048, .num_bufs = 8192});
  iface().tx.queues.push_back({.id = 1, .memory_regions = {"tx1"}});
  expect_only(cfg, "interfaces[0].tx.queues[1].id", "1",
              "dpdk.loopback: software hands the packets of tx queue 1 to the rx queue of the same id, and this "
              "interface has no rx queue 1 (rx queue ids: 0)");
  iface().rx.queues.clear();
  iface().rx.flows.clear();
  iface().tx.queues.pop_back();
  expect_only(cfg, "interfaces[0].tx.queues[0].id", "0", "has no rx queue 0 (rx queue ids: none)");
}

TEST_F(ConfigDpdk, AtMost1024Flows) {
  iface().rx.flows.clear();
  for (uint32_t id = 0; id < detail::dpdk_limits::kMaxFlows; ++id)
    iface().rx.flows.push_back({.id = id, .match = {.udp_dst = static_cast<uint16_t>(5000 + id)}, .queue = 0});
  expect_valid();
  iface().rx.flows.push_back({.id = 1024, .match = {.udp_dst = 7000}, .queue = 0});
  expect_only(cfg, "interfaces[0].rx.flows", "1025 flows",
              "the dpdk engine creates at most 1024 flow rules per interface; has 1025");
}

TEST_F(ConfigDpdk, RssOverQueues) {
  iface().rx.queues.push_back({.id = 1, .memory_regions = {"rx"}});
  iface().rx.queues.push_back({.id = 2, .memory_regions = {"rx"}});
  rx_region().num_bufs = 3 * 5376;
  FlowConfig& f = iface().rx.flows[0];
  f.queues = {0, 2};
  expect_valid();
  f.queue = 2;  // one of them: fine
  expect_valid();
  f.queue = 1;
  expect_only(cfg, "interfaces[0].rx.flows[0].queue", "1",
              "must be one of queues (0, 2) or left out: the flow is spread over queues by RSS");
  f.queue = 0;
  f.queues = {1};
  expect_only(cfg, "interfaces[0].rx.flows[0].queues", "1",
              "RSS needs at least 2 rx queue ids (has 1); to steer the flow to one queue, write queue: 1 instead");
  f.queues = {1, 1};
  expect_only(cfg, "interfaces[0].rx.flows[0].queues[1]", "1",
              "duplicate rx queue id (also interfaces[0].rx.flows[0].queues[0])");
  f.queues = {1, 7};
  expect_only(cfg, "interfaces[0].rx.flows[0].queues[1]", "7", "must be an rx queue id of this interface: 0, 1, 2");
  // The default queue 0 need not exist among them, nor be an rx queue at all.
  f.queues = {1, 2};
  expect_valid();
}

TEST_F(ConfigDpdk, RssIsDpdkOnly) {
  for (const char* engine : {"afxdp", "socket"}) {
    Config c = valid();
    InterfaceConfig& i = c.interfaces[0];
    i.engine = engine;
    i.address = std::string(engine) == "afxdp" ? "veth1" : "udp://0.0.0.0:5000";
    i.options.get<DpdkOptions>() = {};
    i.tx.queues.clear();
    c.memory_regions[0].buf_size = 2048;
    c.memory_regions[0].num_bufs = 16384;
    i.rx.queues.push_back({.id = 1, .memory_regions = {"rx"}});
    i.rx.flows[0].queues = {0, 1};
    expect_only(c, "interfaces[0].rx.flows[0].queues", "0, 1",
                std::string(engine) +
                    " steers a flow to one queue; RSS over queues is dpdk only: use queue: N (one rx "
                    "queue id)");
  }
}

TEST_F(ConfigDpdk, RssInAFile) {
  const auto issues = parse_issues(R"(memory_regions: [{name: rx, num_bufs: 16384}]
interfaces:
  - name: p
    engine: dpdk
    address: net_null0
    rx:
      queues: [{id: 0, memory_regions: [rx]}, {id: 1, memory_regions: [rx]}]
      flows:
        - {id: 0, queue: 0, queues: [1, 0]}
        - {id: 1, queue: 0, queues: [1, 1]}
)",
                                   "rss.yaml");
  // An explicit queue: 0 counts as written, even though it is the default value.
  ASSERT_EQ(issues.size(), 2u) << issues[0].to_string();
  expect_issue(issues, "rss.yaml", 10, 19, "interfaces[0].rx.flows[1].queue", "0",
               "must be one of queues (1, 1) or left out");
  expect_issue(issues, "rss.yaml", 10, 41, "interfaces[0].rx.flows[1].queues[1]", "1", "duplicate rx queue id");
}

TEST_F(ConfigDpdk, EalNeedsADpdkInterface) {
  Config sock = valid();
  sock.interfaces[0] = socket_interface("rx");
  EXPECT_TRUE(sock.validate().empty());
  sock.options.get<EalConfig>().hugepages = false;
  sock.options.get<EalConfig>().cores = {1, 2};
  expect_only(
      sock, "eal", "cores, hugepages",
      "eal: configures DPDK; no interface uses engine: dpdk (remove eal:, or set engine: dpdk on an interface)");
  // Written but at its defaults: nothing to configure.
  const Config ok = Config::parse(R"(interfaces: [{name: s, address: "udp://0.0.0.0:5000"}]
eal: {hugepages: true, memory_mb: 256, cores: []}
)");
  EXPECT_TRUE(ok.validate().empty());
  const auto issues = parse_issues(R"(interfaces: [{name: s, address: "udp://0.0.0.0:5000"}]
eal:
  memory_mb: 512
)");
  ASSERT_EQ(issues.size(), 1u);
  expect_issue(issues, "test.yaml", 2, 1, "eal", "memory_mb", "eal: configures DPDK; no interface uses engine: dpdk");
}

TEST_F(ConfigDpdk, EalCores) {
  cfg.options.get<EalConfig>().cores = {0, 1, 1024};
  expect_only(cfg, "eal.cores[2]", "1024", "must be an integer 0..1023");
  cfg.options.get<EalConfig>().cores = {0, 1, -1};
  expect_only(cfg, "eal.cores[2]", "-1", "must be an integer 0..1023");
  cfg.options.get<EalConfig>().cores = {3, 1, 3};
  expect_only(cfg, "eal.cores[2]", "3", "duplicate CPU (also eal.cores[0])");
  cfg.options.get<EalConfig>().cores = {1, 3};
  cfg.options.get<EalConfig>().main_core = 2;
  expect_only(cfg, "eal.main_core", "2",
              "must be one of eal.cores (1, 3): the main lcore is one of EAL's lcores; or leave main_core out "
              "(default: the first of cores)");
  cfg.options.get<EalConfig>().main_core = 3;
  expect_valid();
  cfg.options.get<EalConfig>().cores.clear();  // main_core alone: EAL runs on that CPU only
  expect_valid();
  cfg.options.get<EalConfig>().main_core = 1024;
  expect_only(cfg, "eal.main_core", "1024", "must be an integer -1..1023");
  cfg.options.get<EalConfig>().main_core = -2;
  expect_only(cfg, "eal.main_core", "-2", "must be an integer -1..1023");
}

TEST_F(ConfigDpdk, EalMemoryAndFilePrefix) {
  for (uint32_t bad : {0u, 15u, 1048577u}) {
    cfg.options.get<EalConfig>().memory_mb = bad;
    expect_only(cfg, "eal.memory_mb", std::to_string(bad), "must be an integer 16..1048576");
  }
  cfg.options.get<EalConfig>().memory_mb = 16;
  cfg.options.get<EalConfig>().hugepages = false;
  expect_valid();
  for (const char* bad : {"a b", "x/y", "netdaq.1", "p\xc3\xa9", "abcdefghijklmnopqrstuvwxyz0123456"}) {
    cfg.options.get<EalConfig>().file_prefix = bad;
    expect_only(cfg, "eal.file_prefix", bad,
                "must be up to 32 characters of A-Z, a-z, 0-9, '_' and '-' (it names EAL's runtime files; empty: "
                "netdaq-<pid>)");
  }
  for (const char* good : {"", "netdaq", "run-2_B", "abcdefghijklmnopqrstuvwxyz012345"}) {
    cfg.options.get<EalConfig>().file_prefix = good;
    expect_valid();
  }
}

TEST_F(ConfigDpdk, EalDevicesAndArgs) {
  cfg.options.get<EalConfig>().allow = {"0000:3b:00.1", "5e:00.0", "eth0"};
  expect_only(cfg, "eal.allow[2]", "eth0",
              "must be a PCI address (0000:3b:00.0 or 3b:00.0: DDDD:BB:DD.F in hex, function 0..7)");
  cfg.options.get<EalConfig>().allow.pop_back();
  expect_valid();
  cfg.options.get<EalConfig>().vdevs = {"net_null0", "null0"};
  expect_only(cfg, "eal.vdevs[1]", "null0", "must be a DPDK virtual device net_<driver><n>, optionally followed by");
  cfg.options.get<EalConfig>().vdevs = {"net_null0", "net_null0,size=128"};
  expect_only(cfg, "eal.vdevs[1]", "net_null0,size=128", "duplicate virtual device 'net_null0' (also eal.vdevs[0])");
  cfg.options.get<EalConfig>().vdevs = {"net_tap0,iface"};
  expect_only(cfg, "eal.vdevs[0]", "net_tap0,iface", "; argument 'iface' is not key=value");
  iface().address = "net_ring0";
  cfg.options.get<EalConfig>().vdevs = {"net_ring0"};
  expect_only(cfg, "eal.vdevs[0]", "net_ring0",
              "is already the device of interfaces[0] ('port'): netdaq hands each dpdk interface's own device to EAL; "
              "list only other devices here");
  cfg.options.get<EalConfig>().vdevs = {"net_ring1", "net_null0,size=64"};
  expect_valid();
  cfg.options.get<EalConfig>().args = {"--log-level=pmd,8", ""};
  expect_only(cfg, "eal.args[1]", "", "must not be empty: an EAL option like --log-level=pmd,8");
  cfg.options.get<EalConfig>().args = {"--log-level", "pmd,8"};
  expect_only(cfg, "eal.args[1]", "pmd,8",
              "must be an EAL option starting with '-' (e.g. --log-level=pmd,8 or --iova-mode=va); write an option's "
              "value in the same entry (--option=value)");
  cfg.options.get<EalConfig>().args = {"--log-level=pmd,8", "-d/usr/lib/librte_net_null.so"};
  expect_valid();
}

TEST_F(ConfigDpdk, OptionsOfAnotherEngine) {
  // socket: and afxdp: options on a dpdk interface.
  iface().options.get<SocketOptions>().busy_poll_us = 50;
  iface().options.get<AfxdpOptions>().fill_ring = 4096;
  auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].socket.busy_poll_us", "50",
               "is an option of the socket engine; this interface's engine is 'dpdk', which ignores it: remove it, or "
               "set engine: socket (the dpdk engine's options are under dpdk:)");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].afxdp.fill_ring", "4096",
               "is an option of the afxdp engine; this interface's engine is 'dpdk', which ignores it: remove it, or "
               "set engine: afxdp");

  // dpdk: options on a socket and an afxdp interface, one issue per option.
  for (const char* engine : {"socket", "afxdp"}) {
    Config other;
    other.memory_regions.push_back({.name = "umem", .buf_size = 2048, .num_bufs = 16384});
    InterfaceConfig& i = other.interfaces.emplace_back();
    i.name = "x";
    i.engine = engine;
    i.address = std::string(engine) == "afxdp" ? "veth1" : "udp://0.0.0.0:5000";
    i.rx.queues.push_back({.id = 0, .memory_regions = {"umem"}});
    EXPECT_TRUE(other.validate().empty()) << engine;
    i.options.get<DpdkOptions>() = {.rx_desc = 512,
              .tx_desc = 512,
              .mtu = 9000,
              .promiscuous = false,
              .isolate = true,
              .loopback = DpdkLoopback::software,
              .tx_checksum_offload = false,
              .mempool_cache = 0,
              .dst_mac = "02:00:00:00:00:01",
              .src_ip = "10.0.0.1",
              .src_port = 1};
    issues = other.validate();
    ASSERT_EQ(issues.size(), 11u) << engine;
    expect_issue(issues, "<c++>", 0, 0, "interfaces[0].dpdk.rx_desc", "512",
                 std::string("is an option of the dpdk engine; this interface's engine is '") + engine +
                     "', which ignores it: remove it, or set engine: dpdk");
    const std::pair<const char*, const char*> shown[] = {{"tx_desc", "512"},       {"mtu", "9000"},
                                                         {"promiscuous", "false"}, {"isolate", "true"},
                                                         {"loopback", "software"}, {"tx_checksum_offload", "false"},
                                                         {"mempool_cache", "0"},   {"dst_mac", "02:00:00:00:00:01"},
                                                         {"src_ip", "10.0.0.1"},   {"src_port", "1"}};
    for (const auto& [key, value] : shown)
      expect_issue(issues, "<c++>", 0, 0, std::string("interfaces[0].dpdk.") + key, value,
                   "is an option of the dpdk engine");
    // Options equal to the defaults count as not set; an unknown engine is reported on its own.
    i.options.get<DpdkOptions>() = {};
    EXPECT_TRUE(other.validate().empty()) << engine;
  }
  Config unknown = valid();
  test::ensure_engine("test-engine");
  unknown.interfaces[0].engine = "test-engine";
  unknown.interfaces[0].rx.flows[0].queues = {0, 0};
  EXPECT_TRUE(unknown.validate().empty()) << unknown.validate()[0].to_string();
}

TEST_F(ConfigDpdk, OptionsOfAnotherEngineInAFile) {
  const auto issues = parse_issues(R"(memory_regions: [{name: bufs, num_bufs: 16384}]
interfaces:
  - name: s
    address: udp://0.0.0.0:5000
    rx: {queues: [{memory_regions: [bufs]}]}
    dpdk: {isolate: true, rx_desc: 1024}
)");
  ASSERT_EQ(issues.size(), 1u);
  expect_issue(issues, "test.yaml", 6, 12, "interfaces[0].dpdk.isolate", "true", "is an option of the dpdk engine");
}

TEST_F(ConfigDpdk, PoolBudgetCountsTheNicsBuffers) {
  auto budgets = detail::pool_budgets(cfg);
  ASSERT_EQ(budgets.size(), 2u);
  ASSERT_EQ(budgets[0].users.size(), 1u);
  EXPECT_EQ(budgets[0].users[0].engine_buffers, 1024u + 256);  // rx_desc + mempool_cache
  EXPECT_EQ(budgets[0].total, 64u * 64 + 1024 + 256);
  ASSERT_EQ(budgets[1].users.size(), 1u);
  EXPECT_EQ(budgets[1].users[0].engine_buffers, 1024u);  // tx_desc
  dpdk().tx_desc = 512;
  EXPECT_EQ(detail::engine_buffers(iface(), false), 512u);
  dpdk().tx_desc = 1024;

  rx_region().num_bufs = 5375;
  expect_only(cfg, "memory_regions[0].num_bufs", "5375",
              "pool 'rx' is too small: its queues can hold 5376 buffers at once: port/rx0 (rx direct: ring_depth 64 x "
              "batch_size 64 + 1280 in the NIC's ring and the mempool cache (dpdk.rx_desc 1024 + dpdk.mempool_cache "
              "256) = 5376); num_bufs must be at least 5376 (or lower ring_depth / batch_size / dpdk.rx_desc / "
              "dpdk.mempool_cache)");
  rx_region().num_bufs = 5376;
  cfg.memory_regions[1].num_bufs = 5119;
  expect_only(cfg, "memory_regions[1].num_bufs", "5119",
              "port/tx0 (tx: ring_depth 64 x batch_size 64 + 1024 in flight (dpdk.tx_desc) = 5120); num_bufs must be "
              "at least 5120 (or lower ring_depth / batch_size / dpdk.tx_desc)");
  cfg.memory_regions[1].num_bufs = 5120;
  expect_valid();

  // Header-data split: the NIC holds rx_desc buffers of each region.
  cfg.memory_regions.push_back({.name = "data", .buf_size = 8192, .num_bufs = 5376});
  iface().rx.queues[0].memory_regions = {"rx", "data"};
  budgets = detail::pool_budgets(cfg);
  EXPECT_EQ(budgets[2].total, 5376u);
  expect_valid();
}

TEST_F(ConfigDpdk, LoadedFileReportsEachRuleAtItsKey) {
  const auto issues = parse_issues(R"(memory_regions:
  - {name: bufs, buf_size: 128, num_bufs: 65536}
  - {name: gpu, kind: device, gpu: 0, buf_size: 2048, num_bufs: 65536}
interfaces:
  - name: p
    engine: dpdk
    address: eth0
    rx:
      queues:
        - {id: 0, memory_regions: [bufs]}
        - {id: 2, memory_regions: [gpu]}
      flows: [{id: 0, queues: [0]}]
    tx:
      queues: [{id: 0, memory_regions: [gpu]}]
      destination: "udp://[fd00::1]:5000"
    dpdk:
      mtu: 20000
      dst_mac: "02:00:00:00:00"
      src_ip: nowhere
      loopback: hardware
    afxdp: {mode: copy}
eal:
  cores: [1, 1]
  file_prefix: "a b"
)",
                                   "rules.yaml");
  expect_issue(issues, "rules.yaml", 7, 5, "interfaces[0].address", "eth0", "must be a PCI address");
  expect_issue(issues, "rules.yaml", 10, 36, "interfaces[0].rx.queues[0].memory_regions[0]", "bufs",
               "has buf_size 128; a dpdk rx queue needs buf_size >= 256");
  expect_issue(issues, "rules.yaml", 11, 12, "interfaces[0].rx.queues[1].id", "2", "must be 0..1 on a dpdk interface");
  expect_issue(issues, "rules.yaml", 11, 36, "interfaces[0].rx.queues[1].memory_regions[0]", "gpu",
               "is device memory; the one region of a dpdk rx queue must be CPU-readable");
  expect_issue(issues, "rules.yaml", 12, 23, "interfaces[0].rx.flows[0].queues", "0", "RSS needs at least 2");
  expect_issue(issues, "rules.yaml", 14, 41, "interfaces[0].tx.queues[0].memory_regions[0]", "gpu",
               "is the buffer pool of dpdk rx queue p/rx2");
  expect_issue(issues, "rules.yaml", 15, 7, "interfaces[0].tx.destination", "udp://[fd00::1]:5000",
               "writes IPv4 headers only");
  expect_issue(issues, "rules.yaml", 17, 7, "interfaces[0].dpdk.mtu", "20000", "must be 0 (leave the port's MTU)");
  expect_issue(issues, "rules.yaml", 18, 7, "interfaces[0].dpdk.dst_mac", "02:00:00:00:00", "must be a MAC address");
  expect_issue(issues, "rules.yaml", 19, 7, "interfaces[0].dpdk.src_ip", "nowhere", "must be an IPv4 address");
  expect_issue(issues, "rules.yaml", 21, 13, "interfaces[0].afxdp.mode", "copy", "is an option of the afxdp engine");
  expect_issue(issues, "rules.yaml", 23, 14, "eal.cores[1]", "1", "duplicate CPU (also eal.cores[0])");
  expect_issue(issues, "rules.yaml", 24, 3, "eal.file_prefix", "a b", "must be up to 32 characters");
  // In file order.
  for (size_t i = 1; i < issues.size(); ++i) EXPECT_LE(issues[i - 1].where.line, issues[i].where.line);
}

}  // namespace
}  // namespace netdaq
