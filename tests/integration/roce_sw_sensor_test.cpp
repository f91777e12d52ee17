// The RoCEv2 sensor emulator (src/sensors/roce_sensor) sending through netdaq's afxdp engine
// (afxdp.tx_raw_frames) on a veth pair between two namespaces this test creates; an AF_PACKET
// socket on the other end (not netdaq) reads the frames. Every packet arrives, in order, with
// consecutive PSNs and IP IDs, a correct ICRC except exactly the ones corrupted on purpose,
// RETHs into the right ring slot with the right rkey, the immediate = frame number at each
// frame's end, and every byte of every frame the sensor test pattern.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "afxdp_util.h"
#include "netdaq/sensor_pattern.h"
#include "test_paths.h"
#include "protocols/roce.h"
#include "sensors/roce_sensor.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;
namespace roce = netdaq::protocols::roce;

namespace {

uint32_t ipv4(const std::string& s) {
  in_addr a{};
  inet_pton(AF_INET, s.c_str(), &a);
  return ntohl(a.s_addr);
}

// RoCEv2 frames (UDP 4791) arriving on A's veth, in arrival order.
std::vector<Bytes> capture_roce(int fd, size_t count, std::chrono::milliseconds timeout) {
  return capture_frames(fd, count, timeout, [](std::span<const std::byte> f) {
    return f.size() >= 42 && f[12] == std::byte{0x08} && f[13] == std::byte{0x00} && f[23] == std::byte{17} &&
           ((unsigned(f[36]) << 8) | unsigned(f[37])) == roce::kUdpPort;
  });
}

// Closes a capture socket also when an assertion ends the test early.
struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

// An AF_PACKET socket on A's veth for IPv4 frames, with room for every frame of a test.
int open_capture(NetnsLab& lab) { return ndqtest::open_capture(lab, lab.a(), ETH_P_IP, 32 << 20); }

// B sends `total` packets of `sensor` through afxdp (tx_raw_frames); returns the session.
std::unique_ptr<Session> send_stream(NetnsLab& lab, sensors::RoceSensor& sensor, uint64_t total) {
  AfxdpIface t;
  t.dev = lab.b().veth;
  t.tx_queue = 0;
  t.afxdp.tx_raw_frames = true;
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(t.build()); });
  auto& q = tx->tx_queue("x0");
  uint64_t sent = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (sent < total && std::chrono::steady_clock::now() < deadline) {
    TxBurst b = q.allocate(std::min<uint64_t>(32, total - sent));
    if (!b) continue;
    const size_t n = b.size();
    EXPECT_EQ(sensor.fill(b), n);
    while (b && std::chrono::steady_clock::now() < deadline) b.send();
    sent += n - b.size();
  }
  EXPECT_EQ(sent, total);
  return tx;
}

sensors::RoceSensorConfig lab_sensor(NetnsLab& lab, uint32_t frame_bytes) {
  sensors::RoceSensorConfig c;
  c.qp = {.qpn = 0x1234, .psn = 100, .va = 1ull << 40, .rkey = 0xdeadbeef, .slots = 16, .stride = 8192,
          .slot_size = 8192, .ipv4 = 0};
  c.src_mac = mac_bytes(lab.mac(lab.b()));
  c.dst_mac = mac_bytes(lab.mac(lab.a()));
  c.src_ip = ipv4(lab.b().ip4);
  c.dst_ip = ipv4(lab.a().ip4);
  c.frame_bytes = frame_bytes;
  return c;
}

class RoceSensorAfxdp : public ::testing::TestWithParam<sensors::RoceSendOp> {};

TEST_P(RoceSensorAfxdp, roce_sw_EveryPacketArrivesWithItsIcrcPsnAndBytes) {
  NDQ_REQUIRE_AFXDP();
  const sensors::RoceSendOp op = GetParam();
  NetnsLab lab;
  constexpr uint32_t kFrames = 40, kFrameBytes = 6000, kMtu = 1024, kCorruptEvery = 7;
  constexpr uint32_t kPerFrame = (kFrameBytes + kMtu - 1) / kMtu;

  // The receiver's queue pair as a peer file (the rdma engine's manual QP format).
  const std::string peer = "/tmp/ndq-roce-sw-peer-" + std::to_string(::getpid()) + ".json";
  std::ofstream(peer) << R"({"gid": "::ffff:)" << lab.a().ip4 << R"(", "rx": [{"qpn": 4660, "psn": 16777200, )"
                      << R"("ring": {"addr": 1099511627776, "rkey": 3735928559, "slots": 16, "stride": 8192, "slot_size": 8192}}]})";
  sensors::RoceSensorConfig c;
  c.qp = sensors::read_roce_peer_file(peer);
  ::unlink(peer.c_str());
  ASSERT_EQ(c.qp.ipv4, ipv4(lab.a().ip4));
  c.src_mac = mac_bytes(lab.mac(lab.b()));
  c.dst_mac = mac_bytes(lab.mac(lab.a()));
  c.src_ip = ipv4(lab.b().ip4);
  c.dst_ip = c.qp.ipv4;
  c.mtu = kMtu;
  c.frame_bytes = kFrameBytes;
  c.op = op;
  c.corrupt_icrc_every = kCorruptEvery;
  sensors::RoceSensor sensor(c);
  ASSERT_EQ(sensor.packets_per_frame(), kPerFrame);

  const Fd cap{open_capture(lab)};

  const uint64_t total = uint64_t{kFrames} * kPerFrame;
  auto tx = send_stream(lab, sensor, total);
  auto& q = tx->tx_queue("x0");
  const std::vector<Bytes> got = capture_roce(cap.fd, total, 10s);
  ASSERT_EQ(got.size(), total) << "every packet arrives once";

  uint32_t psn = c.qp.psn;
  uint16_t ip_id = 0;
  size_t corrupted = 0;
  for (uint32_t f = 0; f < kFrames; ++f) {
    const uint64_t slot_va = c.qp.va + (f % c.qp.slots) * c.qp.stride;
    Bytes frame(kFrameBytes);
    std::vector<bool> seen(kFrameBytes);
    for (uint32_t p = 0; p < kPerFrame; ++p) {
      const uint64_t i = uint64_t{f} * kPerFrame + p;
      const Bytes& w = got[i];
      const std::span<const std::byte> s(w);
      const uint16_t id = static_cast<uint16_t>((unsigned(w[18]) << 8) | unsigned(w[19]));
      EXPECT_EQ(id, ip_id++) << "packet " << i << ": IP ID as the emulator set it";
      roce::Packet k;
      const char* why = roce::parse(s.subspan(42), static_cast<uint32_t>(w.size() - 42), k);
      ASSERT_EQ(why, nullptr) << "packet " << i << ": " << why;
      const bool icrc_ok = roce::icrc(s.subspan(14, w.size() - 14 - roce::kIcrcBytes)) ==
                           roce::load_icrc(w.data() + w.size() - roce::kIcrcBytes);
      const bool corrupt = (i + 1) % kCorruptEvery == 0;
      EXPECT_EQ(icrc_ok, !corrupt) << "packet " << i;
      corrupted += !icrc_ok;
      EXPECT_EQ(k.bth.psn, psn) << "packet " << i << ": PSNs consecutive (wrapping at 2^24)";
      psn = (psn + 1) & roce::kPsnMask;
      EXPECT_EQ(k.bth.dest_qp, c.qp.qpn);
      const bool last = p + 1 == kPerFrame;
      ASSERT_EQ(k.has_imm, last) << "packet " << i;
      if (last) {
        EXPECT_EQ(k.imm, f) << "the immediate is the frame number";
      }
      uint64_t offset = uint64_t{p} * kMtu;
      if (k.has_reth) {
        EXPECT_EQ(k.reth.rkey, c.qp.rkey);
        ASSERT_GE(k.reth.va, slot_va);
        if (op == sensors::RoceSendOp::write_only) offset = k.reth.va - slot_va;
        else EXPECT_EQ(k.reth.va, slot_va);
      }
      ASSERT_EQ(k.has_reth, op == sensors::RoceSendOp::write_only || p == 0) << "packet " << i;
      ASSERT_LE(offset + k.payload_bytes, kFrameBytes);
      for (uint32_t b = 0; b < k.payload_bytes; ++b) {
        frame[offset + b] = w[42 + k.payload_offset + b];
        seen[offset + b] = true;
      }
    }
    for (uint32_t b = 0; b < kFrameBytes; ++b) {
      ASSERT_TRUE(seen[b]) << "frame " << f << " byte " << b << " never written";
      ASSERT_EQ(frame[b], sensor_pattern_byte(f, b)) << "frame " << f << " byte " << b;
    }
  }
  EXPECT_EQ(corrupted, total / kCorruptEvery);
  EXPECT_EQ(sensor.corrupted(), total / kCorruptEvery);
  const QueueStats st = q.stats();
  EXPECT_EQ(st.packets, total);
  EXPECT_EQ(st.total_drops(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Ops, RoceSensorAfxdp,
                         ::testing::Values(sensors::RoceSendOp::write_only, sensors::RoceSendOp::message),
                         [](const auto& i) {
                           return std::string(i.param == sensors::RoceSendOp::write_only ? "WriteOnly" : "Message");
                         });

// The receiving end of issue 32 on the socket engine: socket.ip_headers hands over the IP and
// UDP headers the ICRC covers, so the emulator's ICRCs verify from Packet::frame().
TEST(RoceSensorSocketIpHeaders, roce_sw_IcrcVerifiesFromTheSocketEnginesFrames) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  sensors::RoceSensorConfig c = lab_sensor(lab, 4000);
  c.corrupt_icrc_every = 5;
  sensors::RoceSensor sensor(c);
  const uint64_t total = 30 * sensor.packets_per_frame();
  Iface rs;
  rs.address = "udp://" + lab.a().ip4 + ":4791";
  rs.rx_queues = 1;
  rs.socket.ip_headers = true;
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(rs.build()); });
  auto& rq = rx->rx_queue("if0");
  auto tx = send_stream(lab, sensor, total);
  uint64_t got = 0, bad = 0;
  uint32_t psn = c.qp.psn;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (got < total && std::chrono::steady_clock::now() < deadline) {
    RxBurst b = rq.poll();
    for (const Packet& p : b) {
      const auto f = p.frame();
      ASSERT_GT(f.size(), 42u + roce::kBthBytes + roce::kIcrcBytes);
      roce::Packet k;
      ASSERT_EQ(roce::parse(p.data(), p.size(), k), nullptr);
      EXPECT_EQ(k.bth.psn, psn) << "packet " << got;
      psn = (psn + 1) & roce::kPsnMask;
      const bool ok = roce::icrc(f.subspan(14, f.size() - 14 - roce::kIcrcBytes)) ==
                      roce::load_icrc(f.data() + f.size() - roce::kIcrcBytes);
      EXPECT_EQ(ok, (got + 1) % 5 != 0) << "packet " << got;
      bad += !ok;
      ++got;
    }
  }
  EXPECT_EQ(got, total);
  EXPECT_EQ(bad, total / 5);
  EXPECT_EQ(rq.stats().total_drops(), 0u);
}

// `netdaq roce-send` in B (afxdp, tx_raw_frames), paced: the frames it reports arrive in A.
TEST(RoceSendCli, roce_sw_SendsWhatItReportsPaced) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  const std::string base = "/tmp/ndq-roce-send-" + std::to_string(::getpid());
  std::ofstream(base + ".peer.json") << R"({"gid": "::ffff:)" << lab.a().ip4
                                     << R"(", "rx": [{"qpn": 77, "psn": 5, "ring": {"addr": 65536, "rkey": 42, )"
                                     << R"("slots": 8, "stride": 4096, "slot_size": 4096}}]})";
  std::ofstream(base + ".yaml") << "memory_regions:\n  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}\n"
                                << "interfaces:\n  - name: sensor\n    engine: afxdp\n    address: " << lab.b().veth
                                << "\n    tx:\n      queues:\n        - {id: 0, memory_regions: [umem]}\n"
                                << "    afxdp: {tx_raw_frames: true}\n";
  const Fd cap{open_capture(lab)};
  std::string out;
  const int rc = lab.exec_in(lab.b().ns,
                             {NETDAQ_CLI, "roce-send", base + ".yaml", "--peer", base + ".peer.json", "--frames", "600",
                              "--frame-bytes", "3000", "--op", "message", "--rate-mbps", "10",
                              "--corrupt-icrc-every", "10", "--dst-mac", lab.mac(lab.a()), "--src-ip", lab.b().ip4,
                              "--json"},
                             &out);
  ::unlink((base + ".peer.json").c_str());
  ::unlink((base + ".yaml").c_str());
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j["frames"], 600);
  EXPECT_EQ(j["packets"], 1800);
  EXPECT_EQ(j["corrupted_icrc"], 180);
  EXPECT_EQ(j["first_psn"], 5);
  EXPECT_EQ(j["next_psn"], 1805);
  // 15.3 Mbit at 10 Mbit/s; the pacer lets one burst (batch_size jumbo frames, 4.6 Mbit) go
  // at once, so at least 1.07 s.
  EXPECT_GE(j["seconds"].get<double>(), 1.0) << out;
  EXPECT_LE(j["mbps"].get<double>(), 10 * 1.5) << out;
  const std::vector<Bytes> got = capture_roce(cap.fd, 1800, 10s);
  ASSERT_EQ(got.size(), 1800u);
  uint64_t bytes = 0, bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const std::span<const std::byte> s(got[i]);
    roce::Packet k;
    ASSERT_EQ(roce::parse(s.subspan(42), static_cast<uint32_t>(s.size() - 42), k), nullptr);
    EXPECT_EQ(k.bth.psn, 5 + i);
    EXPECT_EQ(k.bth.dest_qp, 77u);
    bad += roce::icrc(s.subspan(14, s.size() - 18)) != roce::load_icrc(s.data() + s.size() - 4);
    bytes += s.size();
  }
  EXPECT_EQ(bad, 180u);
  EXPECT_EQ(j["bytes"], bytes);
}

}  // namespace
