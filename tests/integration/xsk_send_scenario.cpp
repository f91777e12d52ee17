#include "xsk_send_scenario.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "afxdp_util.h"
#include "netdaq/netdaq.h"
#include "xsk_frames_scenario.h"

namespace ndqtest {

using namespace netdaq;
using gpu::XskFrameReceiver;
using gpu::XskFrameSender;

namespace {

constexpr uint32_t kPerFrame = 8;

// Packets of 1,000 sample bytes at the default MTU, or of 8,192 (8,242 bytes on the wire) at
// MTU 9000 over 4096-byte UMEM buffers: three buffers each, sent and received multi-buffer.
struct Shape {
  uint32_t samples = 1000;
  int mtu = 0;  // 0: the veth's default
  uint32_t buf_size = 2048;
};
constexpr Shape kJumbo{8192, 9000, 4096};

ReorderConfig reorder(const Shape& shape) {
  ReorderConfig r;
  r.name = "xsk0";
  r.queue = 0;
  r.seq_offset = 0;
  r.seq_bits = 32;
  r.payload_offset = 8;
  r.payload_size = shape.samples;
  r.packets_per_frame = kPerFrame;
  r.max_open_frames = 4;
  r.frame_buffers = 64;
  r.frame_timeout_us = 2000000;
  return r;
}

std::vector<std::byte> frame_bytes(uint64_t index, int round, const Shape& shape = {}) {
  std::vector<std::byte> b(size_t{shape.samples} * kPerFrame);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((index * 37 + i * 11 + round * 5 + 3) & 0xff);
  return b;
}

// A receiver on A's veth, a sender on B's (its tx queue sends to the receiver's port).
struct SendRig {
  NetnsLab& lab;
  const XskSendScenario& s;
  Shape shape;
  uint16_t port = free_port(SOCK_DGRAM);
  std::vector<std::shared_ptr<const void>> uploaded;  // outlives the sender, which reads it
  std::unique_ptr<Session> rx_session, tx_session;
  std::unique_ptr<XskFrameReceiver> rx;
  std::unique_ptr<XskFrameSender> tx;
  std::vector<gpu::FrameInfo> infos;
  std::vector<std::vector<std::byte>> got;

  SendRig(NetnsLab& l, const XskSendScenario& sc, const Shape& sh = {}) : lab(l), s(sc), shape(sh) {
    if (shape.mtu) lab.set_mtu(shape.mtu);
    rx_session = afxdp_port_session(lab, port, s.receiver_region, shape.buf_size);
    rx = std::make_unique<XskFrameReceiver>(*rx_session, "x0", reorder(shape), s.receiver);
    start_sender();
  }

  // A session on B's veth and a sender on its tx queue (the last ones destroyed first).
  void start_sender() {
    tx.reset();
    tx_session.reset();
    AfxdpIface iface{.dev = lab.b().veth, .tx_queue = 0,
                     .destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port), .dst_mac = lab.mac(lab.a()),
                     .buf_size = shape.buf_size};
    Config cfg = iface.build();
    cfg.memory_regions[0].kind = s.sender_region;
    if (s.sender_region == MemoryKind::mapped || s.sender_region == MemoryKind::pinned) cfg.memory_regions[0].gpu = 0;
    tx_session = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(cfg); });
    gpu::XskSendLayout layout = gpu::XskSendLayout::matching(reorder(shape));
    layout.buffers = 256;
    tx = std::make_unique<XskFrameSender>(*tx_session, "x0", 0, layout, s.sender);
  }

  void drain() {
    while (gpu::Frame f = rx->next_frame()) {
      infos.push_back(f.info());
      got.push_back(s.read_frame(f));
    }
  }

  // Frames first..first+n-1, at most 16 frames ahead of those the application has taken (a
  // quarter of the receiver's frame buffers; its RX ring never fills), each within 20 s.
  void send(uint64_t first, uint64_t n, int round) {
    for (uint64_t i = first; i < first + n; ++i) {
      uploaded.push_back(s.upload(frame_bytes(i, round, shape)));
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      for (drain(); infos.size() + 16 <= i - first || !tx->send(uploaded.back().get(), i); drain()) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "frame " << i << " was not taken within 20 s";
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
  }

  // Stops the sender (every buffer back), waits for every packet at the receiver, stops it.
  void finish(uint64_t packets) {
    tx->stop();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (rx->stats().packets_in < packets && std::chrono::steady_clock::now() < deadline) {
      drain();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    rx->stop();
    drain();
  }
};

}  // namespace

namespace {

void round_trip(const XskSendScenario& s, const Shape& shape, uint64_t kFrames) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  SendRig rig(lab, s, shape);
  // The queue's own allocate() no longer hands out buffers.
  EXPECT_EQ(rig.tx_session->tx_queue("x0", 0).allocate(8).size(), 0u);
  rig.send(0, kFrames, 0);
  rig.finish(kFrames * kPerFrame);

  const gpu::XskSendStats st = rig.tx->stats();
  EXPECT_EQ(st.frames_queued, kFrames);
  EXPECT_EQ(st.frames_sent, kFrames);
  EXPECT_EQ(st.packets_posted, kFrames * kPerFrame);
  EXPECT_EQ(st.packets_completed, st.packets_posted);
  EXPECT_EQ(st.bad_completions, 0u);
  EXPECT_EQ(st.kick_errors, 0u);
  EXPECT_GT(st.kicks, 0u);
  EXPECT_GT(st.batches, 0u);
  const QueueStats txq = rig.tx_session->tx_queue("x0", 0).stats();
  EXPECT_EQ(txq.total_drops(), 0u) << describe(txq);  // the kernel refused no descriptor

  const gpu::PipelineStats r = rig.rx->stats();
  const uint64_t kernel = rig.rx_session->rx_queue("x0", 0).stats().total_drops();
  EXPECT_EQ(st.packets_posted, r.packets_in + kernel) << "sent " << st.packets_posted << ", received " << r.packets_in
                                                       << ", the receiving kernel dropped " << kernel;
  EXPECT_EQ(r.packets_placed, kFrames * kPerFrame);
  EXPECT_EQ(r.malformed + r.duplicate + r.late + r.no_buffer, 0u);
  ASSERT_EQ(rig.infos.size(), kFrames);
  for (uint64_t i = 0; i < kFrames; ++i) {
    EXPECT_EQ(rig.infos[i].index, i);
    EXPECT_EQ(rig.infos[i].received, kPerFrame) << "frame " << i;
    EXPECT_TRUE(rig.got[i] == frame_bytes(i, 0, shape)) << "frame " << i << "'s bytes differ from what was queued";
  }
  if (shape.mtu) {  // every packet went as three descriptors and came as three
    EXPECT_NE(rig.tx_session->tx_queue("x0", 0).stats().mode.find("multi-buffer"), std::string::npos);
    EXPECT_NE(rig.rx_session->rx_queue("x0", 0).stats().mode.find("multi-buffer"), std::string::npos);
  }
}

}  // namespace

void xsk_send_round_trip(const XskSendScenario& s) { round_trip(s, Shape{}, 120); }
void xsk_send_jumbo_round_trip(const XskSendScenario& s) { round_trip(s, kJumbo, 60); }

void xsk_send_session_after_session(const XskSendScenario& s) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  for (int round = 0; round < 3; ++round) {
    SendRig rig(lab, s);
    rig.send(0, 4, round);
    if (round == 1) {
      rig.finish(4 * kPerFrame);  // stopped first; rounds 0 and 2: destroyed with frames possibly in flight
      ASSERT_EQ(rig.infos.size(), 4u) << "round " << round;
      for (uint64_t i = 0; i < 4; ++i) EXPECT_TRUE(rig.got[i] == frame_bytes(i, round)) << "round " << round;
      EXPECT_EQ(rig.tx->stats().packets_completed, 4u * kPerFrame);
    }
  }
}

void xsk_sender_replaced_while_receiving(const XskSendScenario& s) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  SendRig rig(lab, s);
  rig.send(0, 8, 0);
  rig.tx->stop();
  for (int k = 0; k < 2; ++k) {
    rig.start_sender();  // the old one destroyed while the receiver runs
    rig.send(8 + 8 * k, 8, 0);
  }
  rig.finish(24 * kPerFrame);
  ASSERT_EQ(rig.infos.size(), 24u);
  for (uint64_t i = 0; i < 24; ++i) {
    EXPECT_EQ(rig.infos[i].index, i);
    EXPECT_TRUE(rig.got[i] == frame_bytes(i, 0)) << "frame " << i;
  }
}

}  // namespace ndqtest
