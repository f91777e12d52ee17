// Issue 32's receiver on each engine that can check the ICRC: RoCEv2 WRITEs from the sensor
// emulator (afxdp raw frames, namespace B) received in namespace A by the afxdp engine (XDP
// steers UDP 4791), the socket engine (socket.ip_headers) and the dpdk engine (its af_packet
// driver), placed by reorder mode roce into frames in host memory (HostFrameAssembler,
// frames: host). Every 7th packet goes with a wrong ICRC: exactly those are counted bad_icrc
// and never placed, their frames come out incomplete with those bytes missing (zero), every
// other frame complete and byte-identical to the sensor pattern, its immediate kept, and
// every packet accounted under one outcome.
#include <arpa/inet.h>

#include <chrono>

#include "afxdp_config.h"
#include "afxdp_util.h"
#include "dpdk_util.h"
#include "netdaq/host_frames.h"
#include "netdaq/sensor_pattern.h"
#include "sensors/roce_sensor.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kQpn = 0x1234, kRkey = 0xdeadbeef, kPsn = 16777200;  // the PSN wraps within the run
constexpr uint64_t kVa = 1ull << 40;
constexpr uint32_t kMtu = 1024, kFrameBytes = 6 * kMtu, kFrames = 40, kBadEvery = 7;
constexpr uint32_t kPerFrame = kFrameBytes / kMtu, kTotal = kFrames * kPerFrame;

uint32_t ipv4(const std::string& s) {
  in_addr a{};
  inet_pton(AF_INET, s.c_str(), &a);
  return ntohl(a.s_addr);
}

ReorderConfig roce_reorder() {
  ReorderConfig r;
  r.mode = ReorderMode::roce;
  r.frames = FrameTarget::host;
  r.frame_bytes = kFrameBytes;
  r.max_open_frames = 4;
  r.frame_buffers = 64;  // a burst of 64 packets holds up to 11 frames
  r.frame_timeout_us = 5'000'000;
  r.roce.mtu = kMtu;
  r.roce.queue_pairs = {RoceQueuePair{kQpn, kRkey, kVa, 16, 8192, kFrameBytes, kPsn}};
  return r;
}

enum class Engine { afxdp, socket, dpdk };
std::string name_of(const ::testing::TestParamInfo<Engine>& i) {
  return i.param == Engine::afxdp ? "afxdp" : i.param == Engine::socket ? "socket_ip_headers" : "dpdk_af_packet";
}

Config receiver(NetnsLab& lab, Engine e) {
  FlowConfig roce_port;
  roce_port.match.udp_dst = 4791;
  switch (e) {
    case Engine::afxdp: {
      AfxdpIface a;
      a.dev = lab.a().veth;
      a.rx_queues = {0};
      a.flows = {roce_port};
      return a.build();
    }
    case Engine::socket: {
      Iface s;
      s.address = "udp://" + lab.a().ip4 + ":4791";
      s.rx_queues = 1;
      s.batch = 64;
      s.socket.ip_headers = true;
      return s.build();
    }
    case Engine::dpdk: {
      DpdkIface d;
      d.device = "net_af_packet0,iface=" + lab.a().veth + ",blocksz=12288,framesz=1536,framecnt=4096";  // (no rte_flow)
      return d.build();
    }
  }
  return {};
}

class RoceSwReceive : public ::testing::TestWithParam<Engine> {};

TEST_P(RoceSwReceive, roce_sw_EmulatorWritesBecomeHostFramesBadIcrcsCounted) {
  if (GetParam() == Engine::dpdk) {
    NDQ_REQUIRE_DPDK();
  }
  NDQ_REQUIRE_AFXDP();  // the sender
  NetnsLab lab;
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(receiver(lab, GetParam())); });
  RxQueue& rq = *rx->rx_queues().front();
  HostFrameAssembler frames(roce_reorder());

  sensors::RoceSensorConfig c;
  c.qp = {.qpn = kQpn, .psn = kPsn, .va = kVa, .rkey = kRkey, .slots = 16, .stride = 8192, .slot_size = kFrameBytes,
          .ipv4 = 0};
  c.src_mac = mac_bytes(lab.mac(lab.b()));
  c.dst_mac = mac_bytes(lab.mac(lab.a()));
  c.src_ip = ipv4(lab.b().ip4);
  c.dst_ip = ipv4(lab.a().ip4);
  c.mtu = kMtu;
  c.frame_bytes = kFrameBytes;
  c.op = sensors::RoceSendOp::write_only;  // HSB: each packet its own RETH; the last with immediate
  c.corrupt_icrc_every = kBadEvery;
  sensors::RoceSensor sensor(c);
  ASSERT_EQ(sensor.packets_per_frame(), kPerFrame);

  AfxdpIface t;
  t.dev = lab.b().veth;
  t.tx_queue = 0;
  t.afxdp.tx_raw_frames = true;
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(t.build()); });
  TxQueue& tq = tx->tx_queue("x0");

  // Sent in bursts of 16, each received before the next goes (a veth drops what an unread
  // socket cannot hold; this test is about what arrives, not about buffers).
  std::vector<std::vector<std::byte>> got_bytes(kFrames);
  std::vector<bool> got_complete(kFrames), seen(kFrames);
  std::vector<uint64_t> immediate(kFrames, UINT64_MAX);
  uint64_t frames_out = 0;
  const auto take = [&] {
    HostFrameView f;
    while (frames.pop(f)) {
      ++frames_out;
      if (f.frame < kFrames && !seen[f.frame]) {
        seen[f.frame] = true;
        got_bytes[f.frame].assign(f.bytes.begin(), f.bytes.end());
        got_complete[f.frame] = f.complete;
        for (const auto& it : f.items)
          if (it.id == kRoceImmediateItem) immediate[f.frame] = it.value;
      } else {
        ADD_FAILURE() << "frame " << f.frame << " twice or beyond " << kFrames;
      }
      EXPECT_EQ(f.stream, kQpn);
      frames.release(f);
    }
  };
  uint64_t sent = 0, received = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (received < kTotal && std::chrono::steady_clock::now() < deadline) {
    if (sent == received && sent < kTotal) {
      TxBurst b = tq.allocate(std::min<uint64_t>(16, kTotal - sent));
      if (!b) continue;
      const size_t n = b.size();
      ASSERT_EQ(sensor.fill(b), n);
      while (b && std::chrono::steady_clock::now() < deadline) b.send();
      sent += n - b.size();
    }
    RxBurst burst = rq.poll();
    if (burst.empty()) continue;
    received += burst.size();
    frames.receive(burst, 0);
    burst.release();
    take();
  }
  frames.flush();
  take();
  ASSERT_EQ(sent, kTotal);
  ASSERT_EQ(received, kTotal) << "every packet arrives (rx drops " << rq.stats().total_drops() << ")";

  // Packet k (0-based) went with a wrong ICRC when (k + 1) % kBadEvery == 0.
  const auto bad = [](uint64_t k) { return (k + 1) % kBadEvery == 0; };
  uint64_t bad_packets = 0, missing = 0;
  for (uint32_t f = 0; f < kFrames; ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    ASSERT_TRUE(seen[f]);
    std::vector<std::byte> want(kFrameBytes);
    write_sensor_pattern(want, f);
    bool whole = true;
    for (uint32_t i = 0; i < kPerFrame; ++i)
      if (bad(uint64_t{f} * kPerFrame + i)) {
        std::fill_n(want.begin() + i * kMtu, kMtu, std::byte{0});
        whole = false, ++bad_packets, missing += kMtu;
      }
    EXPECT_EQ(got_bytes[f], want);
    EXPECT_EQ(got_complete[f], whole);
    if (!bad(uint64_t{f} * kPerFrame + kPerFrame - 1)) {
      EXPECT_EQ(immediate[f], f) << "the frame's immediate";
    }
  }
  EXPECT_EQ(frames_out, kFrames);
  const HostFrameStats s = frames.stats();
  ASSERT_EQ(s.roce.size(), 2u);  // the queue pair, then the total
  // A bad ICRC is refused before its QP is trusted: counted in the total only.
  const RoceQueuePairStats &q = s.roce[0], &total = s.roce[1];
  EXPECT_EQ(total.packets, kTotal);
  EXPECT_EQ(total.bad_icrc, bad_packets);
  EXPECT_EQ(q.packets, kTotal - bad_packets);
  EXPECT_EQ(q.placed, kTotal - bad_packets);
  EXPECT_EQ(q.next_psn, (kPsn + kTotal) & 0xFFFFFF);
  EXPECT_EQ(q.unknown_qp + q.bad_rkey + q.out_of_window + q.no_first + q.psn_duplicate + q.psn_stale + q.malformed, 0u);
  EXPECT_EQ(s.packets, kTotal);
  EXPECT_EQ(s.placed + s.malformed + s.control + s.duplicate + s.late + s.no_buffer + s.no_stream, kTotal);
  EXPECT_EQ(s.bytes_missing, missing);
  EXPECT_STREQ(s.last_malformed, "RoCE: ICRC mismatch");
}

INSTANTIATE_TEST_SUITE_P(Engines, RoceSwReceive, ::testing::Values(Engine::afxdp, Engine::socket, Engine::dpdk), name_of);

}  // namespace
