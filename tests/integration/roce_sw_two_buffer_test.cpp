// RoCEv2 WRITEs of 4 KiB payloads (the IB MTU HSB-style sensors use: 4174-byte frames) into
// the afxdp engine, whose UMEM buffers hold 3840 bytes of frame: each arrives in two buffers
// (multi-buffer AF_XDP) as a packet of two segments, and the software receiver checks its ICRC
// across both and places its payload from both. Frames are written with roce::build_frame and
// sent by an AF_PACKET socket in namespace B (veth MTU 7600); some carry a wrong ICRC, one of
// those with the bad byte in the frame's second buffer. Every good frame must come out
// byte-identical to the sensor pattern, exactly the bad packets counted bad_icrc, and every
// packet accounted.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "afxdp_config.h"
#include "afxdp_util.h"
#include "netdaq/host_frames.h"
#include "netdaq/sensor_pattern.h"
#include "protocols/roce.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;
namespace roce = netdaq::protocols::roce;

namespace {

constexpr uint32_t kQpn = 0x42, kRkey = 0x5eed, kMtu = 4096, kPerFrame = 4, kFrames = 24;
constexpr uint32_t kFrameBytes = kPerFrame * kMtu, kTotal = kFrames * kPerFrame;
constexpr uint64_t kVa = 0x7f0000000000ull;
constexpr uint32_t kBad[] = {5, 30, 61};  // packets sent with a wrong ICRC
constexpr size_t kBadByteInSecondBuffer = 4100;  // from the frame's start: past 3840

bool is_bad(uint32_t k) {
  for (uint32_t b : kBad)
    if (b == k) return true;
  return false;
}

uint32_t ipv4(const std::string& s) {
  in_addr a{};
  inet_pton(AF_INET, s.c_str(), &a);
  return ntohl(a.s_addr);
}

// HSB's pattern: each packet a WRITE ONLY with its own RETH, the frame's last with immediate.
std::vector<std::byte> frame_of(NetnsLab& lab, uint32_t k) {
  const uint32_t f = k / kPerFrame, i = k % kPerFrame;
  const bool last = i + 1 == kPerFrame;
  roce::FrameSpec s;
  const auto src = mac_bytes(lab.mac(lab.b())), dst = mac_bytes(lab.mac(lab.a()));
  std::memcpy(s.src_mac, src.data(), 6);
  std::memcpy(s.dst_mac, dst.data(), 6);
  s.src_ip = ipv4(lab.b().ip4), s.dst_ip = ipv4(lab.a().ip4);
  s.bth.opcode = static_cast<uint8_t>(last ? roce::Opcode::uc_write_only_imm : roce::Opcode::uc_write_only);
  s.bth.dest_qp = kQpn;
  s.bth.psn = k;
  s.reth = {kVa + uint64_t{f % 4} * kFrameBytes + uint64_t{i} * kMtu, kRkey, kMtu};
  s.imm = f;
  std::vector<std::byte> payload(kMtu);
  for (uint32_t b = 0; b < kMtu; ++b) payload[b] = sensor_pattern_byte(f, uint64_t{i} * kMtu + b);
  std::vector<std::byte> out(roce::frame_bytes(static_cast<roce::Opcode>(s.bth.opcode), kMtu));
  EXPECT_EQ(roce::build_frame(s, payload, out), out.size());
  if (is_bad(k)) out[k == kBad[1] ? kBadByteInSecondBuffer : 200] ^= std::byte{0x08};
  return out;
}

TEST(RoceSwTwoBuffers, roce_sw_FourKiBPayloadsInTwoAfxdpBuffersAreCheckedAndPlaced) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  for (const auto* side : {&lab.a(), &lab.b()})
    ASSERT_EQ(lab.exec_in(side->ns, {"ip", "link", "set", "dev", side->veth, "mtu", "7600"}), 0);
  AfxdpIface a;
  a.dev = lab.a().veth;
  a.rx_queues = {0};
  a.buf_size = 4096;  // 3840 bytes of frame per buffer (256 of XDP headroom): two per frame
  FlowConfig roce_port;
  roce_port.match.udp_dst = roce::kUdpPort;
  a.flows = {roce_port};
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(a.build()); });
  RxQueue& rq = *rx->rx_queues().front();
  EXPECT_NE(rq.stats().mode.find("multi-buffer"), std::string::npos) << rq.stats().mode;

  ReorderConfig r;
  r.mode = ReorderMode::roce;
  r.frames = FrameTarget::host;
  r.frame_bytes = kFrameBytes;
  r.frame_timeout_us = 5'000'000;
  r.roce.mtu = kMtu;
  r.roce.queue_pairs = {RoceQueuePair{kQpn, kRkey, kVa, 4, kFrameBytes, kFrameBytes, 0}};
  HostFrameAssembler frames(r);

  const int tx = open_capture(lab, lab.b(), ETH_P_IP, 1 << 20);  // bound to B's veth: sends there
  std::vector<std::vector<std::byte>> got(kFrames);
  std::vector<bool> complete(kFrames), seen(kFrames);
  const auto take = [&] {
    HostFrameView f;
    while (frames.pop(f)) {
      if (f.frame < kFrames && !seen[f.frame]) {
        seen[f.frame] = true;
        got[f.frame].assign(f.bytes.begin(), f.bytes.end());
        complete[f.frame] = f.complete;
      } else {
        ADD_FAILURE() << "frame " << f.frame << " twice or beyond " << kFrames;
      }
      frames.release(f);
    }
  };
  uint64_t sent = 0, received = 0, segments2 = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (received < kTotal && std::chrono::steady_clock::now() < deadline) {
    if (sent == received && sent < kTotal) {  // 8 at a time, each batch received before the next
      for (uint32_t n = 0; n < 8 && sent < kTotal; ++n, ++sent) {
        const auto fr = frame_of(lab, static_cast<uint32_t>(sent));
        ASSERT_EQ(::send(tx, fr.data(), fr.size(), 0), static_cast<ssize_t>(fr.size())) << strerror(errno);
      }
    }
    RxBurst burst = rq.poll();
    for (const Packet& p : burst) segments2 += p.segments() == 2;
    received += burst.size();
    frames.receive(burst, 0);
    burst.release();
    take();
  }
  ::close(tx);
  frames.flush();
  take();
  const QueueStats qs = rq.stats();
  ASSERT_EQ(received, kTotal) << "rx drops " << qs.total_drops() << " (oversize " << qs.drops[size_t(DropReason::oversize)]
                              << ", flow_miss " << qs.drops[size_t(DropReason::flow_miss)] << ")";
  EXPECT_EQ(segments2, kTotal) << "every 4174-byte frame in two buffers";

  uint64_t missing = 0;
  for (uint32_t f = 0; f < kFrames; ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    ASSERT_TRUE(seen[f]);
    std::vector<std::byte> want(kFrameBytes);
    write_sensor_pattern(want, f);
    bool whole = true;
    for (uint32_t i = 0; i < kPerFrame; ++i)
      if (is_bad(f * kPerFrame + i)) {
        std::fill_n(want.begin() + i * kMtu, kMtu, std::byte{0});
        whole = false, missing += kMtu;
      }
    EXPECT_EQ(got[f], want);
    EXPECT_EQ(complete[f], whole);
  }
  const HostFrameStats s = frames.stats();
  ASSERT_EQ(s.roce.size(), 2u);
  const RoceQueuePairStats& total = s.roce[1];
  EXPECT_EQ(total.packets, kTotal);
  EXPECT_EQ(total.bad_icrc, std::size(kBad));
  EXPECT_EQ(total.no_headers + total.malformed, 0u);
  EXPECT_EQ(s.roce[0].placed, kTotal - std::size(kBad));
  EXPECT_EQ(s.placed + s.malformed + s.control + s.duplicate + s.late + s.no_buffer + s.no_stream, kTotal);
  EXPECT_EQ(s.bytes_missing, missing);
}

}  // namespace
