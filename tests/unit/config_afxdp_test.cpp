// Configuration of the afxdp engine: the afxdp: keys, and every rule the validator applies to
// an afxdp interface (config_validate_afxdp.cpp, config_validate_engine_options.cpp, and the
// kernel's buffers in the pool budget).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "config_test_util.h"
#include "core/config_limits.h"
#include "engines/afxdp/limits.h"
#include "core/pool_budget.h"
#include "netdaq/config.h"
#include "test_paths.h"

namespace netdaq {
namespace {

using test::expect_issue;
using test::expect_only;
using test::find_issue;
using test::parse_issues;

class ConfigAfxdp : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ensure_socket_engine();
    test::ensure_engine("afxdp");
  }

  // A valid afxdp interface with one rx queue (and a flow) and one tx queue sharing a UMEM.
  // Pool budget: rx 64 x 64 + fill_ring 2048, tx 64 x 64 + tx_ring 2048 = 12288 <= 16384.
  static Config valid() {
    Config c;
    c.memory_regions.push_back({.name = "umem", .buf_size = 2048, .num_bufs = 16384});
    InterfaceConfig i;
    i.name = "sensor";
    i.engine = "afxdp";
    i.address = "veth1";
    i.rx.queues.push_back({.id = 0, .memory_regions = {"umem"}});
    i.rx.flows.push_back({.id = 0, .match = {.udp_dst = 5000}, .queue = 0});
    i.tx.queues.push_back({.id = 0, .memory_regions = {"umem"}});
    i.tx.destination = "udp://10.0.0.1:5000";
    c.interfaces.push_back(i);
    return c;
  }

  InterfaceConfig& iface() { return cfg.interfaces[0]; }
  AfxdpOptions& afxdp() { return cfg.interfaces[0].options.get<AfxdpOptions>(); }

  Config cfg = valid();
};

// Every afxdp key, none at its default (also a fuzz seed).
std::string every_key_yaml() {
  std::ifstream in(test::config_data("afxdp.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(ConfigAfxdp, ValidCxxConfigPasses) { EXPECT_TRUE(cfg.validate().empty()) << cfg.validate()[0].to_string(); }

TEST_F(ConfigAfxdp, EnumNames) {
  EXPECT_STREQ(to_string(XdpAttach::automatic), "auto");
  EXPECT_STREQ(to_string(XdpAttach::native), "native");
  EXPECT_STREQ(to_string(XdpAttach::generic), "generic");
  EXPECT_STREQ(to_string(XskMode::automatic), "auto");
  EXPECT_STREQ(to_string(XskMode::zero_copy), "zero_copy");
  EXPECT_STREQ(to_string(XskMode::copy), "copy");
}

TEST_F(ConfigAfxdp, EveryKeyRoundTrips) {
  const std::string every_key = every_key_yaml();
  const Config c = Config::parse(every_key, "every.yaml");
  const InterfaceConfig& i = c.interfaces.at(0);
  EXPECT_EQ(i.engine, "afxdp");
  EXPECT_EQ(i.address, "enp1s0f0");
  const AfxdpOptions& a = i.options.get<AfxdpOptions>();
  EXPECT_EQ(a.attach, XdpAttach::native);
  EXPECT_EQ(a.mode, XskMode::zero_copy);
  EXPECT_FALSE(a.need_wakeup);
  EXPECT_EQ(a.busy_poll_us, 50u);
  EXPECT_EQ(a.busy_poll_budget, 256u);
  EXPECT_EQ(a.rx_ring, 4096u);
  EXPECT_EQ(a.fill_ring, 8192u);
  EXPECT_EQ(a.tx_ring, 1024u);
  EXPECT_EQ(a.comp_ring, 16384u);
  EXPECT_EQ(a.dst_mac, "02:00:00:00:00:01");
  EXPECT_EQ(a.src_ip, "fd00::2");
  EXPECT_EQ(a.src_port, 4000);
  // Every key has its location.
  const auto& at = c.locations;
  EXPECT_EQ(at.at("interfaces[0].afxdp").line, 14);
  EXPECT_EQ(at.at("interfaces[0].afxdp.attach").line, 15);
  EXPECT_EQ(at.at("interfaces[0].afxdp.attach").column, 7);
  EXPECT_EQ(at.at("interfaces[0].afxdp.src_port").line, 26);
  for (const char* key : {"mode", "need_wakeup", "busy_poll_us", "busy_poll_budget", "rx_ring", "fill_ring", "tx_ring",
                          "comp_ring", "dst_mac", "src_ip"})
    EXPECT_EQ(at.count(std::string("interfaces[0].afxdp.") + key), 1u) << key;

  // The names read back: to_string of each value parses to the same value.
  for (XdpAttach v : {XdpAttach::automatic, XdpAttach::native, XdpAttach::generic}) {
    std::string yaml = every_key;
    yaml.replace(yaml.find("attach: native"), 14, std::string("attach: ") + to_string(v));
    yaml.replace(yaml.find("mode: zero_copy"), 15, "mode: auto");  // zero_copy needs driver XDP
    EXPECT_EQ(Config::parse(yaml).interfaces[0].options.get<AfxdpOptions>().attach, v) << to_string(v);
  }
  for (XskMode v : {XskMode::automatic, XskMode::zero_copy, XskMode::copy}) {
    std::string yaml = every_key;
    yaml.replace(yaml.find("mode: zero_copy"), 15, std::string("mode: ") + to_string(v));
    EXPECT_EQ(Config::parse(yaml).interfaces[0].options.get<AfxdpOptions>().mode, v) << to_string(v);
  }
}

TEST_F(ConfigAfxdp, DefaultsWhenNotWritten) {
  const Config c = Config::parse(R"(memory_regions: [{name: umem, num_bufs: 8192}]
interfaces:
  - {name: s, engine: afxdp, address: veth1, rx: {queues: [{memory_regions: [umem]}]}, afxdp: {}}
)");
  const AfxdpOptions& a = c.interfaces[0].options.get<AfxdpOptions>();
  EXPECT_EQ(a.attach, XdpAttach::automatic);
  EXPECT_EQ(a.mode, XskMode::automatic);
  EXPECT_TRUE(a.need_wakeup);
  EXPECT_EQ(a.busy_poll_us, 0u);
  EXPECT_EQ(a.busy_poll_budget, 64u);
  EXPECT_EQ(a.rx_ring, 2048u);
  EXPECT_EQ(a.fill_ring, 2048u);
  EXPECT_EQ(a.tx_ring, 2048u);
  EXPECT_EQ(a.comp_ring, 2048u);
  EXPECT_EQ(a.dst_mac, "");
  EXPECT_EQ(a.src_ip, "");
  EXPECT_EQ(a.src_port, 0);
}

TEST_F(ConfigAfxdp, ExampleValidates) {
  const Config c = Config::load(std::string(NETDAQ_SOURCE_DIR) + "/examples/afxdp-rx.yaml");
  ASSERT_EQ(c.interfaces.size(), 1u);
  const InterfaceConfig& i = c.interfaces[0];
  EXPECT_EQ(i.engine, "afxdp");
  EXPECT_EQ(i.address, "veth1");
  ASSERT_EQ(i.rx.queues.size(), 1u);
  EXPECT_EQ(i.rx.queues[0].id, 0);
  ASSERT_EQ(i.rx.flows.size(), 1u);
  EXPECT_EQ(i.rx.flows[0].match.udp_dst, 5000);
  EXPECT_EQ(i.rx.flows[0].queue, 0);
}

TEST_F(ConfigAfxdp, LoadErrors) {
  const std::string yaml = R"(memory_regions: [{name: umem}]
interfaces:
  - name: s
    engine: afxdp
    address: veth1
    afxdp:
      atach: native
      attach: nativ
      mode: zerocopy
      need_wakeup: 1
      rx_ring: big
      src_port: 70000
      busy_poll_budget: -1
  - {name: t, engine: afxdp, address: veth2, afxdp: 5}
)";
  const auto issues = parse_issues(yaml, "afxdp.yaml");
  ASSERT_EQ(issues.size(), 8u);
  expect_issue(issues, "afxdp.yaml", 7, 7, "interfaces[0].afxdp.atach", "native",
               "unknown key (did you mean 'attach'?)");
  expect_issue(issues, "afxdp.yaml", 8, 7, "interfaces[0].afxdp.attach", "nativ",
               "must be one of: auto, native, generic (did you mean 'native'?)");
  expect_issue(issues, "afxdp.yaml", 9, 7, "interfaces[0].afxdp.mode", "zerocopy",
               "must be one of: auto, zero_copy, copy (did you mean 'zero_copy'?)");
  expect_issue(issues, "afxdp.yaml", 10, 7, "interfaces[0].afxdp.need_wakeup", "1", "must be true or false");
  expect_issue(issues, "afxdp.yaml", 11, 7, "interfaces[0].afxdp.rx_ring", "big", "must be an integer 64..16384");
  expect_issue(issues, "afxdp.yaml", 12, 7, "interfaces[0].afxdp.src_port", "70000", "must be an integer 0..65535");
  expect_issue(issues, "afxdp.yaml", 13, 7, "interfaces[0].afxdp.busy_poll_budget", "-1", "must be an integer 1..1024");
  expect_issue(issues, "afxdp.yaml", 14, 46, "interfaces[1].afxdp", "5",
               "must be a map with keys: attach, mode, need_wakeup, busy_poll_us, busy_poll_budget, rx_ring, "
               "fill_ring, tx_ring, comp_ring, dst_mac, src_ip, src_port");
}

TEST_F(ConfigAfxdp, InterfaceKeysIncludeAfxdp) {
  const auto issues = parse_issues("interfaces: [{name: s, afxpd: {}}]\n");
  const ConfigIssue* i = find_issue(issues, "interfaces[0].afxpd");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->message, "unknown key (did you mean 'afxdp'?)");
}

TEST_F(ConfigAfxdp, AddressIsANetdevName) {
  iface().address.clear();
  expect_only(cfg, "interfaces[0].address", "",
              "is required for the afxdp engine: a netdev name (e.g. eth1): 1..15 characters, not '.' or '..', "
              "without '/', ':' or spaces");
  iface().address = "udp://0.0.0.0:5000";
  expect_only(cfg, "interfaces[0].address", "udp://0.0.0.0:5000",
              "must be a netdev name (e.g. eth1), not an endpoint: the afxdp engine receives from the netdev's queues");
  for (const char* bad : {"a23456789012345b", ".", "..", "eth0/1", "eth 0", "eth0:1", "eth\t0"}) {
    iface().address = bad;
    expect_only(cfg, "interfaces[0].address", bad, "must be a netdev name (e.g. eth1): 1..15 characters");
  }
  for (const char* good : {"a23456789012345", "veth1", "enp1s0f0np0", "br-lan.100", "x"}) {
    iface().address = good;
    EXPECT_TRUE(cfg.validate().empty()) << good;
  }
}

TEST_F(ConfigAfxdp, RingsArePowersOfTwo) {
  afxdp().rx_ring = 100;
  expect_only(cfg, "interfaces[0].afxdp.rx_ring", "100", "must be a power of two 64..16384 (AF_XDP ring descriptors)");
  afxdp().rx_ring = 32;
  expect_only(cfg, "interfaces[0].afxdp.rx_ring", "32", "must be a power of two 64..16384");
  afxdp().rx_ring = 32768;
  expect_only(cfg, "interfaces[0].afxdp.rx_ring", "32768", "must be a power of two 64..16384");
  afxdp().rx_ring = 64;
  afxdp().tx_ring = 0;
  expect_only(cfg, "interfaces[0].afxdp.tx_ring", "0", "must be a power of two 64..16384");
  afxdp().tx_ring = 64;
  afxdp().comp_ring = 16384;
  afxdp().fill_ring = 3000;
  cfg.memory_regions[0].num_bufs = 65536;
  expect_only(cfg, "interfaces[0].afxdp.fill_ring", "3000", "must be a power of two 64..16384");
  afxdp().fill_ring = 16384;
  EXPECT_TRUE(cfg.validate().empty()) << cfg.validate()[0].to_string();
}

TEST_F(ConfigAfxdp, UmemTooSmallForTheRings) {
  cfg.memory_regions[0].num_bufs = 1024;
  iface().rx.queues[0].ring_depth = 1;  // keep the pool budget out of the way where possible
  iface().tx.queues[0].ring_depth = 1;
  afxdp().tx_ring = 64;
  afxdp().fill_ring = 2048;
  afxdp().comp_ring = 4096;
  const auto issues = cfg.validate();
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].afxdp.fill_ring", "2048",
               "UMEM too small for the rings: region 'umem' has num_bufs 1024, fewer than fill_ring 2048 of rx queue "
               "sensor/rx0; fill_ring must be <= 1024 (or raise num_bufs)");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].afxdp.comp_ring", "4096",
               "UMEM too small for the rings: region 'umem' has num_bufs 1024, fewer than comp_ring 4096 of tx queue "
               "sensor/tx0; comp_ring must be <= 1024 (or raise num_bufs)");
  afxdp().fill_ring = 512;
  afxdp().comp_ring = 1024;
  EXPECT_TRUE(cfg.validate().empty()) << cfg.validate()[0].to_string();
  // A direction without queues needs no room for its ring.
  iface().tx.queues.clear();
  afxdp().comp_ring = 16384;
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigAfxdp, UmemChunkSize) {
  for (uint32_t size : {1024u, 3000u, 8192u, 9000u}) {
    cfg.memory_regions[0].buf_size = size;
    const auto issues = cfg.validate();
    ASSERT_EQ(issues.size(), 2u) << size;  // the rx and the tx queue
    expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rx.queues[0].memory_regions[0]", "umem",
                 "region 'umem' has buf_size " + std::to_string(size) +
                     "; the afxdp engine needs buf_size 2048 or 4096 (an AF_XDP UMEM chunk is a power of two from 2 "
                     "KiB up to the 4 KiB page)");
    expect_issue(issues, "<c++>", 0, 0, "interfaces[0].tx.queues[0].memory_regions[0]", "umem",
                 "buf_size 2048 or 4096");
  }
  cfg.memory_regions[0].buf_size = 4096;
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigAfxdp, UmemIsHostMemory) {
  cfg.memory_regions.push_back(
      {.name = "gpu", .kind = MemoryKind::device, .buf_size = 2048, .num_bufs = 8192, .gpu = 0});
  iface().tx.queues[0].memory_regions = {"gpu"};
  expect_only(cfg, "interfaces[0].tx.queues[0].memory_regions[0]", "gpu",
              "region 'gpu' is device memory; the afxdp engine needs CPU-accessible memory (kind host, huge, pinned or "
              "mapped)");
  for (MemoryKind k : {MemoryKind::huge, MemoryKind::pinned, MemoryKind::mapped}) {
    cfg.memory_regions[1].kind = k;
    cfg.memory_regions[1].gpu = k == MemoryKind::huge ? -1 : 0;
    EXPECT_TRUE(cfg.validate().empty()) << to_string(k);
  }
}

TEST_F(ConfigAfxdp, NoHeaderDataSplit) {
  cfg.memory_regions.push_back({.name = "hdr", .buf_size = 2048, .num_bufs = 16384});
  iface().rx.queues[0].memory_regions = {"hdr", "umem"};
  expect_only(cfg, "interfaces[0].rx.queues[0].memory_regions", "hdr, umem",
              "the afxdp engine takes exactly 1 memory region per queue (has 2): AF_XDP cannot split headers from "
              "data; use the dpdk engine for header-data split");
}

TEST_F(ConfigAfxdp, QueueIds) {
  iface().rx.queues.push_back({.id = 0, .memory_regions = {"umem"}});
  cfg.memory_regions[0].num_bufs = 65536;
  expect_only(cfg, "interfaces[0].rx.queues[1].id", "0", "duplicate queue id (also interfaces[0].rx.queues[0])");
  iface().rx.queues[1].id = 256;
  expect_only(cfg, "interfaces[0].rx.queues[1].id", "256",
              "must be 0..255 for the afxdp engine (a NIC rx queue id; its eBPF program has 256 AF_XDP socket slots)");
  iface().rx.queues[1].id = 255;
  EXPECT_TRUE(cfg.validate().empty());
  iface().tx.queues[0].id = 1000;  // tx sockets are not in the eBPF program's map
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigAfxdp, Destination) {
  iface().tx.destination.clear();
  expect_only(cfg, "interfaces[0].tx.destination", "",
              "is required for the afxdp engine when tx queues are configured: udp://IP:PORT (IPv6: "
              "udp://[fd00::1]:PORT)");
  iface().tx.destination = "tcp://10.0.0.1:5000";
  expect_only(cfg, "interfaces[0].tx.destination", "tcp://10.0.0.1:5000",
              "must be udp://IP:PORT (IPv6: udp://[fd00::1]:PORT): the afxdp engine sends UDP only (TCP needs the "
              "socket engine)");
  iface().tx.destination = "udp://receiver.lan:5000";
  expect_only(
      cfg, "interfaces[0].tx.destination", "udp://receiver.lan:5000",
      "with an IP address, not a host name: the afxdp engine writes the IP header itself and resolves no names");
  iface().tx.destination = "10.0.0.1:5000";
  expect_only(cfg, "interfaces[0].tx.destination", "10.0.0.1:5000", "unknown scheme");
  const std::pair<const char*, const char*> not_unicast[] = {
      {"udp://239.1.2.3:5000", "239.1.2.3 is a multicast group"},
      {"udp://[ff02::1]:5000", "ff02::1 is a multicast group"},
      {"udp://255.255.255.255:5000", "255.255.255.255 is the broadcast address"},
      {"udp://0.0.0.0:5000", "0.0.0.0 is the unspecified address"},
      {"udp://[::]:5000", ":: is the unspecified address"},
  };
  for (const auto& [url, why] : not_unicast) {
    iface().tx.destination = url;
    expect_only(cfg, "interfaces[0].tx.destination", url, std::string("must be a unicast address; ") + why);
  }
  iface().tx.destination = "udp://10.0.0.1:0";
  expect_only(cfg, "interfaces[0].tx.destination", "udp://10.0.0.1:0", "must have a port 1..65535");
  iface().tx.destination = "udp://[fd00::1]:5000";
  EXPECT_TRUE(cfg.validate().empty());
  // No tx queues: no destination needed.
  iface().tx.queues.clear();
  iface().tx.destination.clear();
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigAfxdp, TxHeaderOptions) {
  afxdp().dst_mac = "02:00:00:00:00:1";
  expect_only(cfg, "interfaces[0].afxdp.dst_mac", "02:00:00:00:00:1",
              "must be a MAC address like 02:00:00:00:00:01 (six hex bytes separated by ':')");
  for (const char* bad : {"02-00-00-00-00-01", "0200.0000.0001", "02:00:00:00:00:0g", "02:00:00:00:00:01:"}) {
    afxdp().dst_mac = bad;
    expect_only(cfg, "interfaces[0].afxdp.dst_mac", bad, "must be a MAC address");
  }
  afxdp().dst_mac = "AA:bb:CC:dd:EE:ff";
  EXPECT_TRUE(cfg.validate().empty());

  afxdp().src_ip = "10.0.0";
  expect_only(cfg, "interfaces[0].afxdp.src_ip", "10.0.0", "must be an IPv4 or IPv6 address");
  afxdp().src_ip = "fd00::2";
  expect_only(cfg, "interfaces[0].afxdp.src_ip", "fd00::2",
              "must be an IPv4 address like tx.destination (udp://10.0.0.1:5000): source and destination share one "
              "IP header");
  iface().tx.destination = "udp://[fd00::1]:5000";
  EXPECT_TRUE(cfg.validate().empty());
  afxdp().src_ip = "10.0.0.2";
  expect_only(cfg, "interfaces[0].afxdp.src_ip", "10.0.0.2", "must be an IPv6 address like tx.destination");
  afxdp().src_port = 4000;
  iface().tx.destination = "udp://10.0.0.1:5000";
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigAfxdp, BusyPollAndModes) {
  afxdp().busy_poll_budget = 0;
  expect_only(cfg, "interfaces[0].afxdp.busy_poll_budget", "0", "must be an integer 1..1024");
  afxdp().busy_poll_budget = 1025;
  expect_only(cfg, "interfaces[0].afxdp.busy_poll_budget", "1025", "must be an integer 1..1024");
  afxdp().busy_poll_budget = 1024;
  afxdp().busy_poll_us = 100;
  EXPECT_TRUE(cfg.validate().empty());

  afxdp().attach = XdpAttach::generic;
  afxdp().mode = XskMode::zero_copy;
  expect_only(cfg, "interfaces[0].afxdp.mode", "zero_copy",
              "needs driver XDP, but attach is generic (which copies every packet)");
  afxdp().mode = XskMode::copy;
  EXPECT_TRUE(cfg.validate().empty());
  afxdp().attach = static_cast<XdpAttach>(5);
  expect_only(cfg, "interfaces[0].afxdp.attach", "5", "must be one of: auto, native, generic");
  afxdp().attach = XdpAttach::native;
  afxdp().mode = static_cast<XskMode>(9);
  expect_only(cfg, "interfaces[0].afxdp.mode", "9", "must be one of: auto, zero_copy, copy");
}

TEST_F(ConfigAfxdp, AtMost64Flows) {
  iface().rx.flows.clear();
  for (uint32_t id = 0; id < detail::afxdp_limits::kMaxFlows; ++id)
    iface().rx.flows.push_back({.id = id, .match = {.udp_dst = static_cast<uint16_t>(5000 + id)}, .queue = 0});
  EXPECT_TRUE(cfg.validate().empty());
  iface().rx.flows.push_back({.id = 64, .match = {.udp_dst = 6000}, .queue = 0});
  expect_only(cfg, "interfaces[0].rx.flows", "65 flows",
              "the afxdp engine matches at most 64 flows per interface (the size of its eBPF flow table); has 65");
  // The socket engine has no such table.
  iface().engine = "socket";
  iface().address = "udp://0.0.0.0:5000";
  EXPECT_TRUE(cfg.validate().empty());
}

TEST_F(ConfigAfxdp, OptionsOfAnotherEngine) {
  iface().options.get<SocketOptions>().busy_poll_us = 50;
  iface().options.get<SocketOptions>().gro = false;
  auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].socket.busy_poll_us", "50",
               "is an option of the socket engine; this interface's engine is 'afxdp', which ignores it: remove it, "
               "or set engine: socket (the afxdp engine's options are under afxdp:)");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].socket.gro", "false", "is an option of the socket engine");

  Config sock = valid();
  InterfaceConfig& s = sock.interfaces[0];
  s.engine = "socket";
  s.address = "udp://0.0.0.0:5000";
  s.options.get<AfxdpOptions>().fill_ring = 4096;
  s.options.get<AfxdpOptions>().mode = XskMode::copy;
  issues = sock.validate();
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].afxdp.fill_ring", "4096",
               "is an option of the afxdp engine; this interface's engine is 'socket', which ignores it: remove it, or "
               "set engine: afxdp");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].afxdp.mode", "copy", "is an option of the afxdp engine");
  // Options equal to the defaults count as not set; an unknown engine is reported on its own.
  s.options.get<AfxdpOptions>() = {};
  s.options.get<AfxdpOptions>().src_ip = "";
  EXPECT_TRUE(sock.validate().empty());
  test::ensure_engine("test-engine");
  s.engine = "test-engine";
  s.options.get<AfxdpOptions>().fill_ring = 4096;
  EXPECT_TRUE(sock.validate().empty());
}

TEST_F(ConfigAfxdp, OptionsOfAnotherEngineInAFile) {
  const auto issues = parse_issues(R"(memory_regions: [{name: umem, num_bufs: 16384}]
interfaces:
  - name: s
    address: udp://0.0.0.0:5000
    rx: {queues: [{memory_regions: [umem]}]}
    afxdp: {attach: native}
)");
  ASSERT_EQ(issues.size(), 1u);
  expect_issue(issues, "test.yaml", 6, 13, "interfaces[0].afxdp.attach", "native", "is an option of the afxdp engine");
}

TEST_F(ConfigAfxdp, PoolBudgetCountsTheKernelsBuffers) {
  const auto budgets = detail::pool_budgets(cfg);
  ASSERT_EQ(budgets.size(), 1u);
  ASSERT_EQ(budgets[0].users.size(), 2u);
  EXPECT_EQ(budgets[0].users[0].engine_buffers, 2048u);  // fill_ring
  EXPECT_EQ(budgets[0].users[0].buffers, 64u * 64 + 2048);
  EXPECT_EQ(budgets[0].users[1].engine_buffers, 2048u);  // tx_ring
  EXPECT_EQ(budgets[0].total, 2 * (64u * 64 + 2048));
  EXPECT_EQ(detail::engine_buffers(iface(), true), 2048u);
  afxdp().tx_ring = 512;
  EXPECT_EQ(detail::engine_buffers(iface(), false), 512u);
  afxdp().tx_ring = 2048;

  cfg.memory_regions[0].num_bufs = 12287;
  expect_only(cfg, "memory_regions[0].num_bufs", "12287",
              "pool 'umem' is too small: its queues can hold 12288 buffers at once: "
              "sensor/rx0 (rx direct: ring_depth 64 x batch_size 64 + 2048 in the kernel (afxdp.fill_ring) = 6144), "
              "sensor/tx0 (tx: ring_depth 64 x batch_size 64 + 2048 in flight (afxdp.tx_ring) = 6144); "
              "num_bufs must be at least 12288 (or lower ring_depth / batch_size / afxdp.fill_ring / afxdp.tx_ring)");
  cfg.memory_regions[0].num_bufs = 12288;
  EXPECT_TRUE(cfg.validate().empty());

  // Other engines hand the kernel no pool buffers.
  iface().engine = "socket";
  EXPECT_EQ(detail::engine_buffers(iface(), true), 0u);
  EXPECT_EQ(detail::pool_budgets(cfg)[0].total, 2 * 64u * 64);
}

TEST_F(ConfigAfxdp, LoadedFileReportsEachRuleAtItsKey) {
  const auto issues = parse_issues(R"(memory_regions:
  - {name: umem, buf_size: 9000, num_bufs: 65536}
  - {name: gpu, kind: device, gpu: 0, buf_size: 2048, num_bufs: 65536}
interfaces:
  - name: s
    engine: afxdp
    address: "udp://0.0.0.0:5000"
    rx:
      queues:
        - {id: 0, memory_regions: [umem]}
        - {id: 1, memory_regions: [gpu, gpu]}
    tx:
      queues: [{id: 0, memory_regions: [gpu]}]
      destination: "tcp://10.0.0.1:5000"
    afxdp:
      rx_ring: 1000
      dst_mac: "02:00:00:00:00"
      src_ip: nowhere
    socket: {gso: false}
)",
                                   "rules.yaml");
  expect_issue(issues, "rules.yaml", 7, 5, "interfaces[0].address", "udp://0.0.0.0:5000", "not an endpoint");
  expect_issue(issues, "rules.yaml", 10, 36, "interfaces[0].rx.queues[0].memory_regions[0]", "umem",
               "has buf_size 9000");
  expect_issue(issues, "rules.yaml", 11, 19, "interfaces[0].rx.queues[1].memory_regions", "gpu, gpu",
               "use the dpdk engine for header-data split");
  expect_issue(issues, "rules.yaml", 13, 41, "interfaces[0].tx.queues[0].memory_regions[0]", "gpu", "is device memory");
  expect_issue(issues, "rules.yaml", 14, 7, "interfaces[0].tx.destination", "tcp://10.0.0.1:5000", "sends UDP only");
  expect_issue(issues, "rules.yaml", 16, 7, "interfaces[0].afxdp.rx_ring", "1000", "must be a power of two 64..16384");
  expect_issue(issues, "rules.yaml", 17, 7, "interfaces[0].afxdp.dst_mac", "02:00:00:00:00", "must be a MAC address");
  expect_issue(issues, "rules.yaml", 18, 7, "interfaces[0].afxdp.src_ip", "nowhere", "must be an IPv4 or IPv6 address");
  expect_issue(issues, "rules.yaml", 19, 14, "interfaces[0].socket.gso", "false", "is an option of the socket engine");
}

// rx.reorder launch: rings (docs/gpu-afxdp.md): the queue's RX and fill rings go to
// gpu::XskFrameReceiver, a persistent kernel (frames: gpu) or a CPU thread (frames: host).
ReorderConfig rings_reorder(FrameTarget frames) {
  ReorderConfig g;
  g.launch = LaunchMode::rings;
  g.frames = frames;
  g.seq_offset = 8;
  g.seq_bits = 64;
  g.seq_byte_order = ByteOrder::little;
  g.payload_offset = 24;
  g.payload_size = 1024;
  g.packets_per_frame = 64;
  g.frame_buffers = 16;
  return g;
}

TEST_F(ConfigAfxdp, LaunchRingsTakesHostFramesAndGpuFramesFromGpuReadableMemory) {
  iface().rx.reorder.push_back(rings_reorder(FrameTarget::host));
  EXPECT_TRUE(cfg.validate().empty()) << cfg.validate()[0].to_string();
  // The kernel reads the UMEM over the bus: host memory is refused, mapped taken.
  iface().rx.reorder[0].frames = FrameTarget::gpu;
  test::expect_only(cfg, "interfaces[0].rx.reorder[0].queue", "0", "which the GPU cannot read");
  cfg.memory_regions[0].kind = MemoryKind::mapped;
  cfg.memory_regions[0].gpu = 0;
  EXPECT_TRUE(cfg.validate().empty()) << cfg.validate()[0].to_string();
  // Mode sequence with frames: host is for launch: rings only.
  iface().rx.reorder[0].frames = FrameTarget::host;
  iface().rx.reorder[0].launch = LaunchMode::per_burst;
  test::expect_only(cfg, "interfaces[0].rx.reorder[0].frames", "host", "or mode sequence with launch: rings");
}

TEST_F(ConfigAfxdp, LaunchRingsRefusesWhatTheRingsOwnerCannotDo) {
  const std::string p = "interfaces[0].rx.reorder[0].";
  auto with = [&](auto change) {
    Config c = cfg;
    c.interfaces[0].rx.reorder.push_back(rings_reorder(FrameTarget::host));
    change(c.interfaces[0].rx.reorder[0], c.interfaces[0].rx.queues[0]);
    return c;
  };
  test::expect_only(with([](ReorderConfig& g, QueueConfig&) { g.max_open_frames = 17, g.frame_buffers = 32; }), p + "max_open_frames", "17",
                    "must be 1..16 with launch rings");
  test::expect_only(with([](ReorderConfig& g, QueueConfig&) { g.frame_buffers = g.max_open_frames; }),
                    p + "frame_buffers", "4", "must be more than max_open_frames (4) and at most 256");
  test::expect_only(with([](ReorderConfig& g, QueueConfig&) { g.frame_buffers = 257; }), p + "frame_buffers", "257",
                    "at most 256 with launch rings");
  test::expect_only(with([](ReorderConfig& g, QueueConfig&) { g.input = SampleFormat::int16, g.output = SampleFormat::fp16; }), p + "input", "int16",
                    "copies samples as they are");
  test::expect_only(with([](ReorderConfig&, QueueConfig& q) { q.mode = PollMode::worker; }), p + "launch", "rings",
                    "needs rx queue 0 in mode direct");
  const auto spead = with([](ReorderConfig& g, QueueConfig&) { g.mode = ReorderMode::spead; }).validate();
  const ConfigIssue* mode = find_issue(spead, p + "mode");
  ASSERT_NE(mode, nullptr) << spead.size() << " issues";
  EXPECT_NE(mode->message.find("places by sequence number only"), std::string::npos) << mode->message;
}

TEST_F(ConfigAfxdp, LaunchRingsOnAnEngineWithoutRingsNamesTheLine) {
  // The socket engine has no rings to hand over.
  const auto issues = parse_issues(test::reorder_yaml(
      "          launch: rings\n          payload_size: 1024\n          packets_per_frame: 64\n"
      "          frame_buffers: 16",
      "kind: pinned, gpu: 0"));
  expect_issue(issues, "test.yaml", 11, 11, "interfaces[0].rx.reorder[0].launch", "rings",
               "needs an engine whose rx rings a GPU kernel can own (afxdp); interface 'in' (engine socket) has none");
}

TEST_F(ConfigAfxdp, LaunchRingsExampleValidates) {
  const Config c = Config::load(std::string(NETDAQ_SOURCE_DIR) + "/examples/afxdp-rings.yaml");
  const ReorderConfig& g = c.interfaces.at(0).rx.reorder.at(0);
  EXPECT_EQ(g.launch, LaunchMode::rings);
  EXPECT_EQ(g.frames, FrameTarget::gpu);
  EXPECT_EQ(std::string(to_string(g.launch)), "rings");
}

}  // namespace
}  // namespace netdaq
