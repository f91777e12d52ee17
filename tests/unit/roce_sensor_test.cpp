// The RoCEv2 sensor emulator (src/sensors/roce_sensor): its frames parse with roce::parse,
// their ICRC verifies with roce::icrc (and every Nth is wrong when asked), PSNs are
// consecutive across the 2^24 wrap, frames go to their ring slots with the test pattern and
// end with the frame number as immediate; the peer file's errors name the file and the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "netdaq/sensor_pattern.h"
#include "netdaq/status.h"
#include "protocols/roce.h"
#include "sensors/roce_sensor.h"

using namespace netdaq;
using namespace netdaq::sensors;
namespace roce = netdaq::protocols::roce;

namespace {

RoceSensorConfig config(RoceSendOp op) {
  RoceSensorConfig c;
  c.qp = {.qpn = 0x123456, .psn = 0xFFFFFD, .va = 0x7f0000001000, .rkey = 0xabcdef01, .slots = 3, .stride = 8192,
          .slot_size = 8192, .ipv4 = 0};
  c.src_mac = {0x02, 0, 0, 0, 0, 1};
  c.dst_mac = {0x02, 0, 0, 0, 0, 2};
  c.src_ip = 0x0a000001;
  c.dst_ip = 0x0a000002;
  c.mtu = 1024;
  c.frame_bytes = 5000;  // 5 packets, the last one 904 bytes
  c.op = op;
  return c;
}

struct Sent {
  std::vector<std::byte> frame;
  roce::Packet pkt;
};

// One packet from the sensor, parsed; the ICRC checked against `icrc_ok`.
Sent next(RoceSensor& s, bool icrc_ok) {
  Sent out;
  out.frame.resize(s.max_packet_bytes());
  const uint32_t len = s.next_packet(out.frame);
  EXPECT_GT(len, 0u);
  out.frame.resize(len);
  const std::span<const std::byte> f(out.frame);
  EXPECT_EQ(f[12], std::byte{0x08});
  EXPECT_EQ(f[23], std::byte{17}) << "IPv4 protocol UDP";
  EXPECT_EQ((uint32_t(f[36]) << 8) | uint32_t(f[37]), roce::kUdpPort);
  const char* why = roce::parse(f.subspan(42), len - 42, out.pkt);
  EXPECT_EQ(why, nullptr) << why;
  const uint32_t computed = roce::icrc(f.subspan(14, len - 14 - roce::kIcrcBytes));
  const uint32_t carried = roce::load_icrc(out.frame.data() + len - roce::kIcrcBytes);
  EXPECT_EQ(computed == carried, icrc_ok);
  return out;
}

void check_stream(RoceSendOp op) {
  const RoceSensorConfig c = config(op);
  RoceSensor s(c);
  ASSERT_EQ(s.packets_per_frame(), 5u);
  uint32_t psn = c.qp.psn;
  uint64_t wire = 0;
  for (uint64_t frame = 0; frame < 4; ++frame) {
    const uint64_t slot_va = c.qp.va + (frame % c.qp.slots) * c.qp.stride;
    std::vector<std::byte> got;
    for (uint32_t p = 0; p < 5; ++p) {
      const Sent x = next(s, true);
      wire += x.frame.size();
      const roce::Packet& k = x.pkt;
      EXPECT_EQ(k.bth.psn, psn) << "frame " << frame << " packet " << p;
      psn = (psn + 1) & roce::kPsnMask;
      EXPECT_EQ(k.bth.dest_qp, c.qp.qpn);
      EXPECT_TRUE(k.write);
      const bool last = p == 4;
      EXPECT_EQ(k.has_imm, last);
      if (last) {
        EXPECT_EQ(k.imm, frame);
      }
      const uint32_t bytes = last ? 5000 - 4 * 1024 : 1024;
      EXPECT_EQ(k.payload_bytes, bytes);
      if (op == RoceSendOp::write_only) {
        EXPECT_EQ(k.position, roce::Position::only);
        ASSERT_TRUE(k.has_reth);
        EXPECT_EQ(k.reth.va, slot_va + p * 1024);
        EXPECT_EQ(k.reth.length, bytes);
        EXPECT_EQ(k.reth.rkey, c.qp.rkey);
      } else {
        const roce::Position want = p == 0 ? roce::Position::first : last ? roce::Position::last : roce::Position::middle;
        EXPECT_EQ(k.position, want);
        EXPECT_EQ(k.has_reth, p == 0);
        if (p == 0) {
          EXPECT_EQ(k.reth.va, slot_va);
          EXPECT_EQ(k.reth.length, 5000u);
          EXPECT_EQ(k.reth.rkey, c.qp.rkey);
        }
      }
      const std::byte* payload = x.frame.data() + 42 + k.payload_offset;
      got.insert(got.end(), payload, payload + k.payload_bytes);
    }
    ASSERT_EQ(got.size(), 5000u);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], sensor_pattern_byte(frame, i)) << "frame " << frame << " byte " << i;
  }
  EXPECT_EQ(s.frames_done(), 4u);
  EXPECT_EQ(s.packets(), 20u);
  EXPECT_EQ(wire, 4 * s.wire_bytes_per_frame());
  EXPECT_EQ(s.next_psn(), (c.qp.psn + 20) & roce::kPsnMask) << "PSN wraps at 2^24";
}

TEST(roce_sw_sensor, WriteOnlyPacketsParseWithCorrectIcrc) { check_stream(RoceSendOp::write_only); }
TEST(roce_sw_sensor, MessagePacketsParseWithCorrectIcrc) { check_stream(RoceSendOp::message); }

TEST(roce_sw_sensor, CorruptsEveryNthIcrcAndOnlyThose) {
  RoceSensorConfig c = config(RoceSendOp::write_only);
  c.corrupt_icrc_every = 3;
  RoceSensor s(c);
  for (uint64_t i = 1; i <= 12; ++i) next(s, i % 3 != 0);
  EXPECT_EQ(s.corrupted(), 4u);
}

TEST(roce_sw_sensor, SmallBufferFillsNothing) {
  RoceSensor s(config(RoceSendOp::write_only));
  std::vector<std::byte> small(100);
  EXPECT_EQ(s.next_packet(small), 0u);
  EXPECT_EQ(s.packets(), 0u);
  EXPECT_EQ(s.next_psn(), 0xFFFFFDu);
}

TEST(roce_sw_sensor, RefusesAFrameLargerThanTheSlot) {
  RoceSensorConfig c = config(RoceSendOp::message);
  c.frame_bytes = 8193;
  try {
    RoceSensor s(c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("slot_size 8192"), std::string::npos) << e.what();
  }
  c.frame_bytes = 1000;
  c.mtu = 1500;
  EXPECT_THROW(RoceSensor{c}, Error);
}

class RoceSensorPeerFile : public ::testing::Test {
 protected:
  std::string path = "/tmp/ndq-roce-peer-" + std::to_string(::getpid()) + ".json";
  void write(const std::string& text) { std::ofstream(path) << text; }
  void TearDown() override { ::unlink(path.c_str()); }
  std::string error() {
    try {
      read_roce_peer_file(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(RoceSensorPeerFile, roce_sw_ReadsTheReceiversQueuePair) {
  write(R"({"gid": "::ffff:10.77.0.1", "rx": [{"qpn": 17, "psn": 5, "ring": {"addr": 140000000, "rkey": 1234,
           "slots": 64, "stride": 2048, "slot_size": 2048}}], "tx": [{"qpn": 18, "psn": 0}]})");
  const RoceRemoteQp q = read_roce_peer_file(path);
  EXPECT_EQ(q.qpn, 17u);
  EXPECT_EQ(q.psn, 5u);
  EXPECT_EQ(q.va, 140000000u);
  EXPECT_EQ(q.rkey, 1234u);
  EXPECT_EQ(q.slots, 64u);
  EXPECT_EQ(q.stride, 2048u);
  EXPECT_EQ(q.slot_size, 2048u);
  EXPECT_EQ(q.ipv4, 0x0a4d0001u);
}

TEST_F(RoceSensorPeerFile, roce_sw_ErrorsNameTheFileAndTheKey) {
  write(R"({"rx": [{"qpn": 17, "psn": 0, "ring": {"addr": 1, "slots": 4, "stride": 64, "slot_size": 64}}]})");
  std::string e = error();
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("rx[0].ring.rkey is missing"), std::string::npos) << e;
  write(R"({"rx": [{"qpn": "17"}]})");
  EXPECT_NE(error().find("rx[0].qpn = \"17\": must be an unsigned integer"), std::string::npos) << error();
  write(R"({"rx": [)");
  EXPECT_NE(error().find("not JSON"), std::string::npos) << error();
  write(R"({"gid": "::1", "tx": []})");
  EXPECT_NE(error().find("no \"rx\" array"), std::string::npos) << error();
  ::unlink(path.c_str());
  EXPECT_NE(error().find("cannot open it"), std::string::npos) << error();
}

}  // namespace
