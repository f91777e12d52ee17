// Configuration of the rdma engine: the rdma: keys and every rule the validator applies to an
// rdma interface (engines/rdma/validate.cpp), checked in every build, with or without rdma-core.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "netdaq/config.h"
#include "netdaq/engine_info.h"
#include "netdaq/engines/rdma.h"

namespace netdaq {
namespace {

using test::expect_issue;
using test::expect_only;
using test::parse_issues;

class ConfigRdma : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ensure_socket_engine();
    test::ensure_engine("rdma");
  }

  // An rdma_cm server (2 rx queues) and a client (1 tx queue).
  static Config valid() {
    Config c;
    c.memory_regions.push_back({.name = "bufs", .buf_size = 4096, .num_bufs = 32768});
    InterfaceConfig server;
    server.name = "server";
    server.engine = "rdma";
    server.address = "rdma://10.0.0.2:7471";
    server.rx.queues.push_back({.id = 0, .memory_regions = {"bufs"}});
    server.rx.queues.push_back({.id = 1, .memory_regions = {"bufs"}});
    InterfaceConfig client;
    client.name = "client";
    client.engine = "rdma";
    client.address = "rdma://10.0.0.1";
    client.tx.destination = "rdma://10.0.0.2:7471";
    client.tx.queues.push_back({.id = 0, .memory_regions = {"bufs"}});
    c.interfaces = {server, client};
    return c;
  }
};

TEST_F(ConfigRdma, ValidPairAndItsOptionsFromYaml) {
  EXPECT_TRUE(valid().validate().empty());
  const Config c = Config::parse(R"(memory_regions: [{name: bufs, buf_size: 4096, num_bufs: 32768}]
interfaces:
  - name: sensor
    engine: rdma
    address: rdma://10.0.0.2
    rdma: {transport: uc, connect: manual, peer_file: /run/fpga.json, op: write_imm, recv_depth: 1024, max_inline: 0,
           signal_every: 1, timeout_ms: 100}
    rx: {queues: [{memory_regions: [bufs]}]}
)");
  const auto& o = c.interfaces[0].options.get<RdmaOptions>();
  EXPECT_EQ(o.transport, RdmaTransport::uc);
  EXPECT_EQ(o.op, RdmaOp::write_imm);
  EXPECT_EQ(o.recv_depth, 1024u);
  EXPECT_EQ(o.max_inline, 0u);
  EXPECT_EQ(o.timeout_ms, 100u);
  EXPECT_EQ(o.peer_file, "/run/fpga.json");
  EXPECT_STREQ(to_string(o.transport), "uc");
  EXPECT_STREQ(to_string(RdmaConnect::manual), "manual");
}

TEST_F(ConfigRdma, AddressesNameAnIpAndAPortWhereOneIsNeeded) {
  Config c = valid();
  c.interfaces[0].address = "rdma://10.0.0.2";
  expect_only(c, "interfaces[0].address", "rdma://10.0.0.2", "missing :PORT");
  c = valid();
  c.interfaces[0].address = "udp://10.0.0.2:7471";
  expect_only(c, "interfaces[0].address", "udp://10.0.0.2:7471", "unknown scheme (expected rdma://IP:PORT");
  c = valid();
  c.interfaces[1].tx.destination = "rdma://sensor-host:7471";
  expect_only(c, "interfaces[1].tx.destination", "rdma://sensor-host:7471", "not a host name");
  c = valid();
  c.interfaces[0].address = "rdma://0.0.0.0:7471";
  expect_only(c, "interfaces[0].address", "rdma://0.0.0.0:7471", "the unspecified address");
  c = valid();
  c.interfaces[1].tx.destination.clear();
  expect_only(c, "interfaces[1].tx.destination", "", "is required for the rdma engine when tx queues are configured");
  c = valid();
  c.interfaces[0].address = "rdma://10.0.0.2:0";
  expect_only(c, "interfaces[0].address", "rdma://10.0.0.2:0", "must have a port 1..65535");
  // A client's own address is its source: no port needed.
  c = valid();
  c.interfaces[1].address.clear();
  EXPECT_TRUE(c.validate().empty());
}

// UC goes through rdma_cm too (its RDMA_PS_IB port space), not only by hand.
TEST_F(ConfigRdma, UcIsValidThroughRdmaCm) {
  Config c = valid();
  for (auto& i : c.interfaces) i.options.get<RdmaOptions>().transport = RdmaTransport::uc;
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigRdma, ManualNeedsThePeersParameters) {
  Config c = valid();
  auto& o = c.interfaces[0].options.get<RdmaOptions>();
  o.connect = RdmaConnect::manual;
  o.mtu = 1500;
  const auto issues = c.validate();
  ASSERT_EQ(issues.size(), 2u) << issues[0].to_string();
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rdma.peer_file", "", "is required with connect: manual");
  expect_issue(issues, "<c++>", 0, 0, "interfaces[0].rdma.mtu", "1500", "must be one of 256, 512, 1024, 2048, 4096");
  o.mtu = 4096;
  o.peer_file = "/run/fpga/qp.json";
  EXPECT_TRUE(c.validate().empty());
  c.interfaces[1].options.get<RdmaOptions>() = o;
  expect_only(c, "interfaces[1].tx.destination", "rdma://10.0.0.2:7471", "must be empty with connect: manual");
}

TEST_F(ConfigRdma, QueueMemoryAndDepths) {
  Config c = valid();
  c.memory_regions.push_back({.name = "gpu", .kind = MemoryKind::device, .buf_size = 4096, .num_bufs = 16384, .gpu = 0});
  // GPU memory is the engine's to register (dma-buf, then nvidia-peermem) when the queue opens.
  c.interfaces[1].tx.queues[0].memory_regions = {"gpu"};
  c.interfaces[0].rx.queues[0].memory_regions = {"gpu"};
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
  EXPECT_TRUE(capabilities_of(c.interfaces[0])->device_memory);
  c = valid();
  c.memory_regions.push_back({.name = "hdr", .buf_size = 64, .num_bufs = 8192});
  c.interfaces[0].rx.queues[1].memory_regions = {"hdr", "bufs"};
  expect_only(c, "interfaces[0].rx.queues[1].memory_regions", "2 regions", "one region per queue");
  c = valid();
  c.interfaces[1].options.get<RdmaOptions>().signal_every = 300;
  expect_only(c, "interfaces[1].rdma.signal_every", "300", "must be <= rdma.send_depth (256)");
}

// The receives each rx queue posts are buffers the device holds: counted in the pool budget.
TEST_F(ConfigRdma, PostedReceivesCountInThePoolBudget) {
  Config c = valid();
  c.interfaces[0].options.get<RdmaOptions>().recv_depth = 16384;
  const auto issues = c.validate();
  ASSERT_FALSE(issues.empty());
  EXPECT_NE(issues[0].message.find("posted as receives (rdma.recv_depth)"), std::string::npos) << issues[0].message;
}

TEST_F(ConfigRdma, WrongValuesFromYamlNameKeyAndLine) {
  const auto issues = parse_issues(R"(memory_regions: [{name: bufs, buf_size: 4096}]
interfaces:
  - name: sensor
    engine: rdma
    address: rdma://10.0.0.2:7471
    rdma: {transport: rd, recv_depth: 0, local_psn: 16777216}
    rx: {queues: [{memory_regions: [bufs]}]}
)");
  expect_issue(issues, "test.yaml", 6, 12, "interfaces[0].rdma.transport", "rd", "must be one of: rc, uc");
  expect_issue(issues, "test.yaml", 6, 27, "interfaces[0].rdma.recv_depth", "0", "must be an integer 1..16384");
  expect_issue(issues, "test.yaml", 6, 42, "interfaces[0].rdma.local_psn", "16777216", "must be an integer 0..16777215");
}

// rdma: on another engine's interface is an error; socket: on an rdma interface is ignored.
TEST_F(ConfigRdma, OptionBlocksOfOtherEngines) {
  Config c = valid();
  c.interfaces[0].options.get<SocketOptions>().rcvbuf = 1 << 20;
  EXPECT_TRUE(c.validate().empty());
  c = valid();
  InterfaceConfig udp;
  udp.name = "udp";
  udp.address = "udp://127.0.0.1:9000";
  udp.rx.queues.push_back({.id = 0, .memory_regions = {"bufs"}});
  udp.options.get<RdmaOptions>().recv_depth = 64;
  c.interfaces.push_back(udp);
  const auto issues = c.validate();
  ASSERT_EQ(issues.size(), 1u) << issues[0].to_string();
  EXPECT_NE(issues[0].key.find("interfaces[2].rdma"), std::string::npos) << issues[0].to_string();
}

}  // namespace
}  // namespace netdaq
