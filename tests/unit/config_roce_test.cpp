// rx.reorder mode roce (docs/roce-software.md): the roce: block in YAML and every rule the
// validator applies to it (config_validate_roce.cpp), each error naming its key and line.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "netdaq/config.h"
#include "test_paths.h"

namespace netdaq {
namespace {

using test::find_issue;

// A socket interface receiving a sensor on UDP 4791 into pinned buffers; REORDER: the keys
// of its reorder after `mode: roce` (line 12 on). ENGINE: the interface's engine lines.
const char* kRoceYaml = R"(
memory_regions:
  - {name: pay, kind: pinned, gpu: 0, buf_size: 2048, num_bufs: 16384}
interfaces:
  - name: sensor
    address: udp://0.0.0.0:4791
    rx:
      queues: [{id: 0, batch_size: 64, memory_regions: [pay]}]
      reorder:
        - queue: 0
          mode: roce
REORDER
)";

std::string roce_yaml(const std::string& reorder_keys) { return test::fill_in(kRoceYaml, "REORDER", reorder_keys); }

// One queue pair, as lines 12-14 (the ICRC off: the socket engine delivers no IP header).
const char* kOneQp = R"(          roce:
            check_icrc: false
            queue_pairs: [{qpn: 0x100, rkey: 0x1234, base_va: 0x10000000, slots: 4, slot_size: 65536}])";

// An afxdp interface steering UDP 4791 to a roce reorder (check_icrc left at true), its region
// of `kind`; the roce block on line 14.
std::string afxdp_roce_yaml(const std::string& kind) {
  return test::fill_in(R"(
memory_regions:
  - {name: pay, kind: KIND, gpu: 0, buf_size: 4096, num_bufs: 16384}
interfaces:
  - name: sensor
    engine: afxdp
    address: veth1
    rx:
      queues: [{id: 0, batch_size: 64, memory_regions: [pay]}]
      flows: [{id: 0, queue: 0, match: {udp_dst: 4791}}]
      reorder:
        - queue: 0
          mode: roce
          roce:
            queue_pairs: [{qpn: 0x100, slot_size: 65536}]
)",
                       "KIND", kind);
}

class roce_sw_config : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ensure_socket_engine();
    test::ensure_engine("afxdp");
    test::ensure_engine("dpdk");
  }
};

// The issue about `key` at `line` whose message says `part`.
void expect_at(const std::vector<ConfigIssue>& issues, const std::string& key, int line, const std::string& part) {
  const ConfigIssue* i = find_issue(issues, "interfaces[0].rx.reorder[0]." + key);
  ASSERT_NE(i, nullptr) << "no issue for " << key << "; first: " << (issues.empty() ? "none" : issues[0].to_string());
  EXPECT_EQ(i->where.file, "test.yaml") << key;
  EXPECT_EQ(i->where.line, line) << key << ": " << i->to_string();
  EXPECT_NE(i->message.find(part), std::string::npos) << key << ": " << i->message;
}

TEST_F(roce_sw_config, EveryKeyReadsFromYamlWithHex) {
  const Config c = Config::parse(roce_yaml(R"(          max_streams: 2
          roce:
            check_icrc: false
            mtu: 512
            metadata_bytes: 128
            psn_window: 0x1000
            queue_pairs:
              - {qpn: 0x100, rkey: 0xCAFE0001, base_va: 0x7f0000000000, slots: 4, stride: 0x20000, slot_size: 0x1F000,
                 psn: 0xFFFFF0}
              - {qpn: 0x101, rkey: 7, base_va: 0, slot_size: 4096})"),
                                 "test.yaml");
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.mode, ReorderMode::roce);
  EXPECT_TRUE(places_spans(g.mode));
  EXPECT_FALSE(g.roce.check_icrc);
  EXPECT_EQ(g.roce.mtu, 512u);
  EXPECT_EQ(g.roce.metadata_bytes, 128u);
  EXPECT_EQ(g.roce.psn_window, 4096u);
  ASSERT_EQ(g.roce.queue_pairs.size(), 2u);
  const RoceQueuePair& a = g.roce.queue_pairs[0];
  EXPECT_EQ(a.qpn, 0x100u);
  EXPECT_EQ(a.rkey, 0xCAFE0001u);
  EXPECT_EQ(a.base_va, 0x7f0000000000u);
  EXPECT_EQ(a.slots, 4u);
  EXPECT_EQ(a.stride, 0x20000u);
  EXPECT_EQ(a.slot_size, 0x1F000u);
  EXPECT_EQ(a.psn, 0xFFFFF0u);
  const RoceQueuePair& b = g.roce.queue_pairs[1];  // defaults: one slot, stride = slot_size, psn 0
  EXPECT_EQ(b.slots, 1u);
  EXPECT_EQ(b.stride, 0u);
  EXPECT_EQ(b.psn, 0u);
  EXPECT_EQ(g.frame_bytes, 0u);  // derived: the largest slot_size
  EXPECT_EQ(c.location_of("interfaces[0].rx.reorder[0].roce.queue_pairs[1].slot_size").line, 21);
}

TEST_F(roce_sw_config, DefaultsAreAnRdmaNicsAndValidate) {
  const Config c = Config::parse(roce_yaml(kOneQp), "test.yaml");
  const RoceOptions& o = c.interfaces[0].rx.reorder.at(0).roce;
  EXPECT_EQ(o.mtu, 1024u);
  EXPECT_EQ(o.metadata_bytes, 0u);
  EXPECT_EQ(o.psn_window, 1024u);
  EXPECT_TRUE(RoceOptions{}.check_icrc);
}

TEST_F(roce_sw_config, TypeErrorsNameTheKeyAndLine) {
  const auto issues = test::parse_issues(roce_yaml(R"(          roce:
            check_icrc: maybe
            mtu: big
            peer_file: sensor.json
            queue_pairs:
              - {qpn: many, rkey: -1, base_va: 0x1p3, slots: 0x}
              - {qpn: 0x102, window: 4})"));
  expect_at(issues, "roce.check_icrc", 13, "must be true or false");
  expect_at(issues, "roce.mtu", 14, "must be an integer 256..4096");
  expect_at(issues, "roce.peer_file", 15, "queue_pairs, check_icrc, mtu, metadata_bytes, psn_window");
  expect_at(issues, "roce.queue_pairs[0].qpn", 17, "must be an integer 2..16777215");
  expect_at(issues, "roce.queue_pairs[0].rkey", 17, "must be an integer 0..4294967295");
  expect_at(issues, "roce.queue_pairs[0].base_va", 17, "must be an integer");
  expect_at(issues, "roce.queue_pairs[0].slots", 17, "must be an integer 1..1048576");
  expect_at(issues, "roce.queue_pairs[1].window", 18, "qpn, rkey, base_va, slots, stride, slot_size, psn");
}

TEST_F(roce_sw_config, QueuePairRules) {
  const auto issues = test::parse_issues(roce_yaml(R"(          max_streams: 8
          frame_buffers: 32
          roce:
            check_icrc: false
            queue_pairs:
              - {qpn: 0, slot_size: 4096}
              - {qpn: 1, slot_size: 4096, psn: 0x1000000}
              - {qpn: 0x1000000, slot_size: 4096, slots: 0}
              - {qpn: 0x200, slot_size: 4096, stride: 2048}
              - {qpn: 0x200, slot_size: 4096}
              - {qpn: 0x300, slot_size: 4096, base_va: 0xFFFFFFFFFFFF0000, slots: 17}
              - {qpn: 0x301})"));
  expect_at(issues, "roce.queue_pairs[0].qpn", 17, "is required: the QP number the sensor writes to");
  expect_at(issues, "roce.queue_pairs[1].qpn", 18, "QPs 0 and 1 are the SMI and GSI queue pairs");
  expect_at(issues, "roce.queue_pairs[1].psn", 18, "must be 0..0xFFFFFF (0..16777215): PSNs are 24 bits");
  expect_at(issues, "roce.queue_pairs[2].qpn", 19, "QP numbers are 24 bits");
  expect_at(issues, "roce.queue_pairs[2].slots", 19, "must be an integer 1..1048576");
  expect_at(issues, "roce.queue_pairs[3].stride", 20, "must be at least slot_size (4096): slots must not overlap");
  expect_at(issues, "roce.queue_pairs[4].qpn", 21, "is also the qpn of roce.queue_pairs[3]");
  expect_at(issues, "roce.queue_pairs[5].base_va", 22, "ends beyond the 64-bit address space");
  expect_at(issues, "roce.queue_pairs[6].slot_size", 23, "is required: the largest frame the sensor writes");
  const ConfigIssue* dup = find_issue(issues, "interfaces[0].rx.reorder[0].roce.queue_pairs[4].qpn");
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->value, "0x200");
}

TEST_F(roce_sw_config, AtLeastOneQueuePairAndAStreamEach) {
  auto issues = test::parse_issues(roce_yaml(R"(          roce: {check_icrc: false})"));
  expect_at(issues, "roce.queue_pairs", 12, "needs at least one queue pair in mode roce");
  issues = test::parse_issues(roce_yaml(R"(          roce:
            check_icrc: false
            queue_pairs: [{qpn: 0x100, slot_size: 4096}, {qpn: 0x101, slot_size: 4096}])"));
  // max_streams left out: the nearest written key is the reorder entry (line 10).
  expect_at(issues, "max_streams", 10, "must be at least the number of roce.queue_pairs (2)");
  expect_at(issues, "max_streams", 10, "set max_streams: 2");
}

TEST_F(roce_sw_config, MtuPsnWindowMetadataAndGranule) {
  const auto issues = test::parse_issues(roce_yaml(R"(          granule: 48
          roce:
            check_icrc: false
            mtu: 1000
            psn_window: 1000
            metadata_bytes: 4096
            queue_pairs: [{qpn: 0x100, slot_size: 4096}])"));
  expect_at(issues, "roce.mtu", 15, "must be one of: 256, 512, 1024, 2048, 4096");
  expect_at(issues, "roce.psn_window", 16, "must be a power of two 1..8388608");
  expect_at(issues, "roce.queue_pairs[0].slot_size", 18, "must be more than roce.metadata_bytes (4096)");
  auto more = test::parse_issues(roce_yaml(R"(          granule: 48
          roce:
            check_icrc: false
            psn_window: 0x1000000
            queue_pairs: [{qpn: 0x100, slot_size: 4096}])"));
  expect_at(more, "granule", 12, "must divide roce.mtu (1024)");
  expect_at(more, "roce.psn_window", 15, "must be a power of two");
  more = test::parse_issues(roce_yaml(R"(          roce:
            check_icrc: false
            mtu: 256
            metadata_bytes: 512
            queue_pairs: [{qpn: 0x100, slot_size: 4096}])"));
  expect_at(more, "roce.metadata_bytes", 15, "must be at most roce.mtu (256): the end-of-frame metadata is one");
}

TEST_F(roce_sw_config, TheBuffersHoldTheLargestPacket) {
  const auto issues = test::parse_issues(roce_yaml(R"(          roce:
            check_icrc: false
            mtu: 2048
            queue_pairs: [{qpn: 0x100, slot_size: 65536}])"));
  expect_at(issues, "roce.mtu", 14,
            "packets carry up to 2084 bytes of UDP payload (BTH, RETH, immediate, 2048 bytes, ICRC), more than the "
            "queue's buffers hold (2048 bytes)");
}

// afxdp receives a frame into two UMEM buffers (multi-buffer): mtu 4096 over 4096-byte buffers
// (4174-byte frames) is fine there, and refused where a packet must fit one buffer.
TEST_F(roce_sw_config, TwoBufferEnginesHoldAPacketLargerThanABuffer) {
  std::string y = afxdp_roce_yaml("pinned");
  const auto edit = [&](const std::string& from, const std::string& to) { y.replace(y.find(from), from.size(), to); };
  edit("          roce:\n", "          roce:\n            mtu: 4096\n");
  EXPECT_NO_THROW(Config::parse(y, "test.yaml"));
  edit("engine: afxdp", "engine: socket");
  edit("address: veth1", "address: udp://0.0.0.0:4791");
  edit("      flows: [{id: 0, queue: 0, match: {udp_dst: 4791}}]\n", "");
  edit("            mtu: 4096", "            check_icrc: false\n            mtu: 4096");
  const auto issues = test::issues_of([&] { Config::parse(y, "test.yaml"); });
  const ConfigIssue* i = find_issue(issues, "interfaces[0].rx.reorder[0].roce.mtu");
  ASSERT_NE(i, nullptr) << (issues.empty() ? "none" : issues[0].to_string());
  EXPECT_NE(i->message.find("more than the queue's buffers hold (4096 bytes)"), std::string::npos) << i->message;
}

TEST_F(roce_sw_config, FrameBytesIsTheLargestSlotSize) {
  const std::string qps = R"(
            queue_pairs: [{qpn: 0x100, slot_size: 4096}, {qpn: 0x101, slot_size: 8192}])";
  const std::string head = "          max_streams: 2\n          roce:\n            check_icrc: false";
  EXPECT_NO_THROW(Config::parse(roce_yaml(head + qps)));
  auto issues = test::parse_issues(roce_yaml("          frame_bytes: 4096\n" + head + qps));
  expect_at(issues, "frame_bytes", 12,
            "must be the largest roce.queue_pairs[].slot_size (8192), the bytes of one frame; leave it out");
  // A queue pair without slot_size takes frame_bytes; the others must fit in it.
  EXPECT_NO_THROW(Config::parse(roce_yaml("          frame_bytes: 8192\n" + head + R"(
            queue_pairs: [{qpn: 0x100}, {qpn: 0x101, slot_size: 4096}])")));
  issues = test::parse_issues(roce_yaml("          frame_bytes: 4096\n" + head + R"(
            queue_pairs: [{qpn: 0x100}, {qpn: 0x101, slot_size: 8192}])"));
  expect_at(issues, "roce.queue_pairs[1].slot_size", 16, "must be at most frame_bytes (4096)");
}

TEST_F(roce_sw_config, OnlyInModeRoceAndNoPayloadKeys) {
  auto issues = test::parse_issues(roce_yaml(std::string(kOneQp) + R"(
          payload_size: 1024
          payload_offset: 8
          packets_per_frame: 16)"));
  expect_at(issues, "payload_size", 15, "is not read in mode roce: each packet's RoCE header (BTH, RETH) says");
  expect_at(issues, "payload_offset", 16, "the RoCE header (BTH, RETH) starts the UDP payload");
  expect_at(issues, "packets_per_frame", 17, "mode roce sizes frames by roce.queue_pairs[].slot_size");
  std::string spead = roce_yaml(std::string(kOneQp) + "\n          frame_bytes: 65536");
  spead.replace(spead.find("mode: roce"), 10, "mode: spead");
  issues = test::parse_issues(spead);
  expect_at(issues, "roce", 12, "is only read in mode roce; mode is spead");
}

TEST_F(roce_sw_config, IcrcNeedsTheIpHeaderAndCpuReadableBytes) {
  // The socket engine delivers UDP payloads: the ICRC cannot be checked there.
  auto issues = test::parse_issues(roce_yaml(R"(          roce:
            queue_pairs: [{qpn: 0x100, slot_size: 4096}])"));
  const ConfigIssue* i = find_issue(issues, "interfaces[0].rx.reorder[0].roce.check_icrc");
  ASSERT_NE(i, nullptr) << (issues.empty() ? "none" : issues[0].to_string());
  EXPECT_EQ(i->where.line, 12);  // the roce block: check_icrc left out (true)
  EXPECT_NE(i->message.find("needs each packet's IP and UDP headers"), std::string::npos) << i->message;
  EXPECT_NE(i->message.find("afxdp, dpdk"), std::string::npos) << i->message;
  EXPECT_NE(i->message.find("or set check_icrc: false"), std::string::npos) << i->message;

  // afxdp delivers whole frames: checked; but not over device memory, which the CPU cannot read.
  const auto with_kind = afxdp_roce_yaml;
  EXPECT_NO_THROW(Config::parse(with_kind("pinned"), "test.yaml"));
  issues = test::issues_of([&] { Config::parse(with_kind("device"), "test.yaml"); });
  expect_at(issues, "roce.check_icrc", 14, "region 'pay' is of kind device, which the CPU cannot read");
  // Header-data split: no packet is whole in one buffer.
  std::string dpdk = with_kind("pinned");
  dpdk.replace(dpdk.find("engine: afxdp"), 13, "engine: dpdk ");
  dpdk.replace(dpdk.find("address: veth1"), 14, "address: \"0000:3b:00.0\"");
  dpdk.replace(dpdk.find("memory_regions:\n"), 16,
               "memory_regions:\n  - {name: hdr, kind: huge, buf_size: 256, num_bufs: 16384}\n");
  dpdk.replace(dpdk.find("memory_regions: [pay]"), 21, "memory_regions: [hdr, pay]");
  issues = test::issues_of([&] { Config::parse(dpdk, "test.yaml"); });
  expect_at(issues, "roce.check_icrc", 15, "rx queue 0 splits headers from data (2 regions)");
}

TEST_F(roce_sw_config, ExampleFilesLoad) {
  const std::string dir = std::string(NETDAQ_SOURCE_DIR) + "/examples/";
  for (const char* name : {"roce-afxdp.yaml", "roce-dpdk.yaml", "roce-socket.yaml"}) {
    SCOPED_TRACE(name);
    const Config c = Config::load(dir + name);
    const ReorderConfig& g = c.interfaces.at(0).rx.reorder.at(0);
    EXPECT_EQ(g.mode, ReorderMode::roce);
    ASSERT_FALSE(g.roce.queue_pairs.empty());
    EXPECT_EQ(g.roce.queue_pairs[0].qpn, 0x100u);
  }
}

}  // namespace
}  // namespace netdaq
