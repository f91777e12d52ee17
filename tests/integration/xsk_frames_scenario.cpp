#include "xsk_frames_scenario.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "afxdp_util.h"
#include "egress_dropper.h"
#include "netdaq/netdaq.h"
#include "xsk_receiver_child.h"

namespace ndqtest {

using namespace netdaq;
using gpu::XskFrameReceiver;

namespace {

constexpr uint32_t kSamples = 1000;   // sample bytes per packet
constexpr uint32_t kHeader = 8;       // sequence (4 bytes, big endian) + 4 reserved
constexpr uint32_t kPerFrame = 8;

std::byte sample(uint64_t seq, uint32_t i) { return static_cast<std::byte>((seq * 131 + i * 7 + 1) & 0xff); }

Bytes packet(uint64_t seq, uint32_t samples = kSamples) {
  Bytes b(kHeader + samples);
  for (int k = 0; k < 4; ++k) b[k] = static_cast<std::byte>(seq >> (24 - 8 * k));
  for (uint32_t i = 0; i < samples; ++i) b[kHeader + i] = sample(seq, i);
  return b;
}

ReorderConfig reorder(uint32_t buffers, uint32_t samples = kSamples) {
  ReorderConfig r;
  r.name = "xsk0";
  r.queue = 0;
  r.seq_offset = 0;
  r.seq_bits = 32;
  r.payload_offset = kHeader;
  r.payload_size = samples;
  r.packets_per_frame = kPerFrame;
  r.max_open_frames = 4;
  r.frame_buffers = buffers;
  r.frame_timeout_us = 2000000;  // frames close by newer frames or stop(), never by a slow test machine
  return r;
}

// An afxdp receiver on A's veth with its rings handed to an XskFrameReceiver; a UDP socket in B.
struct Rig {
  NetnsLab& lab;
  uint16_t port = 0;
  std::unique_ptr<Session> session;
  std::unique_ptr<XskFrameReceiver> rx;
  Socket tx;
  size_t sent = 0;

  Rig(NetnsLab& l, const XskScenario& s, uint32_t buffers, uint32_t samples = kSamples, uint32_t buf_size = 2048)
      : lab(l), scenario(s) {
    port = free_port(SOCK_DGRAM);
    session = afxdp_port_session(lab, port, s.region, buf_size);
    rx = std::make_unique<XskFrameReceiver>(*session, "x0", reorder(buffers, samples), s.driver);
    tx = lab.run_in(lab.b().ns, [] { return Socket::udp(); });
  }

  // What next_frame() handed out: each frame's info, missing bitmap and bytes; the frames
  // themselves are kept while `hold`, released at once otherwise.
  const XskScenario& scenario;
  bool hold = false;
  std::vector<gpu::Frame> held;
  std::vector<std::pair<gpu::FrameInfo, std::vector<uint64_t>>> infos;
  std::vector<std::vector<std::byte>> bytes;

  void drain() {
    while (gpu::Frame f = rx->next_frame()) {
      infos.emplace_back(f.info(), std::vector<uint64_t>(f.missing().begin(), f.missing().end()));
      bytes.push_back(scenario.read_frame(f));
      if (hold) held.push_back(std::move(f));
    }
  }

  // Paced: 32 packets, then a pause, so that the kernel's copy never meets a full RX ring;
  // frames are taken as they come, as an application would.
  void send(const Bytes& b) {
    ASSERT_TRUE(tx.send_to(lab.a().ip4, port, b));
    if (++sent % 32 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    drain();
  }

  // Frames until n arrived in all, or 20 s.
  void take(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (drain(); infos.size() < n && std::chrono::steady_clock::now() < deadline; drain())
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

  // Waits until the receiver has taken n packets (or 20 s); false, saying what it took and
  // what the kernel dropped, when it did not.
  ::testing::AssertionResult wait_taken(uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (rx->stats().packets_in < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    const gpu::PipelineStats st = rx->stats();
    if (st.packets_in >= n) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the receiver took " << st.packets_in << " of " << n << " packets in 20 s ("
                                         << counts() << ")";
  }

  // The receiver's counts and the queue's (what the kernel dropped), for a failure message.
  std::string counts() {
    const gpu::PipelineStats st = rx->stats();
    return "in " + std::to_string(st.packets_in) + ", placed " + std::to_string(st.packets_placed) + ", no_buffer " +
           std::to_string(st.no_buffer) + ", late " + std::to_string(st.late) + ", frames complete " +
           std::to_string(st.frames_complete) + ", dropped " + std::to_string(st.frames_dropped) + "; the queue: " +
           describe(session->rx_queue("x0", 0).stats());
  }

  uint64_t kernel_drops() { return session->rx_queue("x0", 0).stats().total_drops(); }
};

// Frame fi's expected bytes: each slot its packet's samples, zeros where `missing` says.
std::vector<std::byte> expected_frame(uint64_t fi, uint64_t missing_mask, uint32_t samples = kSamples) {
  std::vector<std::byte> e(size_t{kPerFrame} * samples, std::byte{0});
  for (uint32_t slot = 0; slot < kPerFrame; ++slot) {
    if ((missing_mask >> slot) & 1) continue;
    for (uint32_t i = 0; i < samples; ++i) e[size_t{slot} * samples + i] = sample(fi * kPerFrame + slot, i);
  }
  return e;
}

}  // namespace

std::vector<std::byte> read_host_frame(const gpu::Frame& f) {
  std::vector<std::byte> b(f.size_bytes());
  std::memcpy(b.data(), f.data(), b.size());
  return b;
}

Config afxdp_port_config(const std::string& veth, uint16_t port, MemoryKind region, uint32_t buf_size) {
  AfxdpIface iface;
  iface.buf_size = buf_size;
  iface.dev = veth;
  iface.rx_queues = {0};
  iface.flows = {udp_flow(1, 0, port)};
  iface.num_bufs = 4096;
  Config cfg = iface.build();
  cfg.memory_regions[0].kind = region;
  if (region == MemoryKind::mapped || region == MemoryKind::pinned) cfg.memory_regions[0].gpu = 0;
  return cfg;
}

ReorderConfig xsk_scenario_reorder(uint32_t buffers) { return reorder(buffers); }

std::unique_ptr<Session> afxdp_port_session(NetnsLab& lab, uint16_t port, MemoryKind region, uint32_t buf_size) {
  const Config cfg = afxdp_port_config(lab.a().veth, port, region, buf_size);
  return lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(cfg); });
}

std::unique_ptr<Session> afxdp_rx_session(NetnsLab& lab, PollMode mode) {
  AfxdpIface iface;
  iface.dev = lab.a().veth;
  iface.rx_queues = {0};
  iface.mode = mode;
  return lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(iface.build()); });
}

void xsk_every_fate(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  // A buffer for every frame: how many frames one step closes before the application takes
  // them depends on the machine's timing (xsk_no_buffer counts what happens when they run out).
  NetnsLab lab;
  Rig rig(lab, s, 64);
  // The queue's own poll() no longer touches the rings.
  EXPECT_EQ(rig.session->rx_queue("x0", 0).poll().size(), 0u);

  constexpr uint64_t kFrames = 40;
  const std::vector<uint64_t> never = {13, 77, 78};  // frame 1 slot 5, frame 9 slots 5 and 6
  for (uint64_t seq = 0; seq < kFrames * kPerFrame; ++seq) {
    if (std::find(never.begin(), never.end(), seq) != never.end()) continue;
    rig.send(packet(seq));
    if (seq == 20) rig.send(packet(20));                // a duplicate (frame 2 is still open)
    if (seq == 100) rig.send(Bytes(4, std::byte{1}));    // malformed: shorter than the fields
  }
  EXPECT_TRUE(rig.wait_taken(kFrames * kPerFrame - never.size() + 2));
  rig.send(packet(3));  // late: frame 0 went out long ago
  EXPECT_TRUE(rig.wait_taken(kFrames * kPerFrame));

  rig.take(kFrames - 1);
  rig.rx->stop();  // the last frame may be waiting for packets that never come: it closes now
  rig.take(kFrames);
  const auto& infos = rig.infos;
  const auto& bytes = rig.bytes;

  const gpu::PipelineStats got = rig.rx->stats();
  ASSERT_EQ(infos.size(), kFrames) << "taken " << got.packets_in << ", placed " << got.packets_placed << ", duplicate "
                                   << got.duplicate << ", late " << got.late << ", malformed " << got.malformed
                                   << ", no_buffer " << got.no_buffer << ", complete " << got.frames_complete
                                   << ", incomplete " << got.frames_incomplete << "; sent " << rig.sent;
  for (uint64_t fi = 0; fi < kFrames; ++fi) {
    const uint64_t mask = fi == 1 ? 1u << 5 : fi == 9 ? (1u << 5) | (1u << 6) : 0;
    const gpu::FrameInfo& info = infos[fi].first;
    EXPECT_EQ(info.index, fi);
    EXPECT_EQ(info.expected, kPerFrame);
    EXPECT_EQ(info.received, kPerFrame - std::popcount(mask)) << "frame " << fi;
    ASSERT_EQ(infos[fi].second.size(), 1u);
    EXPECT_EQ(infos[fi].second[0], mask) << "frame " << fi << "'s missing bitmap";
    EXPECT_TRUE(bytes[fi] == expected_frame(fi, mask)) << "frame " << fi << "'s bytes differ from what was sent";
  }
  const gpu::PipelineStats st = rig.rx->stats();
  const uint64_t kernel = rig.kernel_drops();
  EXPECT_EQ(kernel, 0u) << describe(rig.session->rx_queue("x0", 0).stats());
  EXPECT_EQ(rig.sent, st.packets_in + kernel);
  EXPECT_EQ(st.packets_in, st.packets_placed + st.duplicate + st.late + st.malformed + st.no_buffer);
  EXPECT_EQ(st.packets_placed, kFrames * kPerFrame - never.size());
  EXPECT_EQ(st.duplicate, 1u);
  EXPECT_EQ(st.late, 1u);
  EXPECT_EQ(st.malformed, 1u);
  EXPECT_EQ(st.no_buffer, 0u);
  EXPECT_EQ(st.frames_complete, kFrames - 2);
  EXPECT_EQ(st.frames_incomplete, 2u);
  EXPECT_EQ(st.packets_missing, never.size());
  EXPECT_EQ(st.frames_skipped, 0u);
  EXPECT_GT(st.jobs, 0u);
}

void xsk_wire_loss(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  constexpr uint32_t kEvery = 11, kPhase = 5;  // more than a frame apart: one loss a frame at most
  constexpr uint64_t kFrames = 40;
  NetnsLab lab;
  Rig rig(lab, s, 64);
  EgressDropper link(lab, rig.port, kEvery, kPhase);
  uint64_t lost = 0;
  for (uint64_t seq = 0; seq < kFrames * kPerFrame; ++seq) {
    rig.send(packet(seq));
    lost += seq % kEvery == kPhase;
  }
  EXPECT_TRUE(rig.wait_taken(kFrames * kPerFrame - lost));
  rig.rx->stop();  // the last frames wait for packets that never come: they close now
  rig.take(kFrames);

  const gpu::PipelineStats st = rig.rx->stats();
  const uint64_t kernel = rig.kernel_drops();
  EXPECT_EQ(link.seen(), kFrames * kPerFrame);
  EXPECT_EQ(link.dropped(), lost);
  EXPECT_EQ(kernel, 0u) << describe(rig.session->rx_queue("x0", 0).stats());
  EXPECT_EQ(rig.sent, st.packets_in + kernel + link.dropped()) << rig.counts();
  EXPECT_EQ(st.packets_in, st.packets_placed);
  EXPECT_EQ(st.packets_missing, link.dropped());
  ASSERT_EQ(rig.infos.size(), kFrames) << rig.counts();
  uint64_t incomplete = 0;
  for (uint64_t fi = 0; fi < kFrames; ++fi) {
    uint64_t mask = 0;
    for (uint32_t slot = 0; slot < kPerFrame; ++slot)
      if ((fi * kPerFrame + slot) % kEvery == kPhase) mask |= uint64_t{1} << slot;
    incomplete += mask != 0;
    const gpu::FrameInfo& info = rig.infos[fi].first;
    EXPECT_EQ(info.index, fi);
    EXPECT_EQ(info.received, kPerFrame - std::popcount(mask)) << "frame " << fi;
    ASSERT_EQ(rig.infos[fi].second.size(), 1u);
    EXPECT_EQ(rig.infos[fi].second[0], mask) << "frame " << fi << "'s missing bitmap";
    EXPECT_TRUE(rig.bytes[fi] == expected_frame(fi, mask)) << "frame " << fi << "'s bytes differ from what was sent";
  }
  EXPECT_EQ(st.frames_incomplete, incomplete);
  EXPECT_EQ(st.frames_complete, kFrames - incomplete);
}

void xsk_no_buffer(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  constexpr uint32_t kBuffers = 6;
  NetnsLab lab;
  Rig rig(lab, s, kBuffers);
  rig.hold = true;
  const auto& infos = rig.infos;
  const auto& bytes = rig.bytes;
  // Frames 0-9 while the application holds every frame it gets: 6 placed, 4 with no buffer.
  for (uint64_t seq = 0; seq < 10 * kPerFrame; ++seq) rig.send(packet(seq));
  ASSERT_TRUE(rig.wait_taken(10 * kPerFrame));
  rig.take(kBuffers);
  ASSERT_EQ(infos.size(), kBuffers);
  gpu::PipelineStats st = rig.rx->stats();
  EXPECT_EQ(st.packets_placed, kBuffers * kPerFrame);
  EXPECT_EQ(st.no_buffer, (10 - kBuffers) * kPerFrame);  // frames_dropped: once a later frame closes
  EXPECT_EQ(rig.rx->next_frame().info().bytes, 0u);  // nothing else was placed
  rig.held.clear();  // every buffer back
  rig.hold = false;
  // Frames 10 and 11 are placed again; 6-9 stay counted as dropped, not skipped.
  for (uint64_t seq = 10 * kPerFrame; seq < 12 * kPerFrame; ++seq) rig.send(packet(seq));
  ASSERT_TRUE(rig.wait_taken(12 * kPerFrame));
  rig.rx->stop();
  rig.take(kBuffers + 2);
  ASSERT_EQ(infos.size(), kBuffers + 2u) << "frames 10 and 11 not handed out; " << rig.counts();
  for (size_t k = 0; k < infos.size(); ++k) {
    const uint64_t fi = k < kBuffers ? k : 10 + (k - kBuffers);
    EXPECT_EQ(infos[k].first.index, fi);
    EXPECT_TRUE(bytes[k] == expected_frame(fi, 0)) << "frame " << fi;
  }
  st = rig.rx->stats();
  EXPECT_EQ(rig.sent, st.packets_in + rig.kernel_drops());
  EXPECT_EQ(st.packets_in, st.packets_placed + st.no_buffer);
  EXPECT_EQ(st.packets_placed, (kBuffers + 2) * kPerFrame);
  EXPECT_EQ(st.frames_complete, kBuffers + 2u);
  EXPECT_EQ(st.frames_dropped, 10u - kBuffers);
  EXPECT_EQ(st.frames_skipped, 0u);
}


void xsk_session_after_session(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  for (int round = 0; round < 3; ++round) {
    {
      Rig rig(lab, s, 8);
      for (uint64_t seq = 0; seq < 4 * kPerFrame; ++seq) rig.send(packet(seq));
      rig.take(4);
      ASSERT_EQ(rig.infos.size(), 4u) << "round " << round;
      for (uint64_t fi = 0; fi < 4; ++fi) EXPECT_TRUE(rig.bytes[fi] == expected_frame(fi, 0)) << "round " << round;
      if (round == 1) rig.rx->stop();  // stopped first, or (rounds 0, 2) stopped by its destructor
    }
    EXPECT_FALSE(xdp_attached(lab, lab.a())) << "round " << round << " left its XDP program on " << lab.a().veth;
  }
}


void xsk_receiver_killed_then_reopened(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  const uint16_t port = free_port(SOCK_DGRAM);
  {
    ReceiverChild child(lab.a().ns, lab.a().veth, port, s.driver);
    Socket tx = lab.run_in(lab.b().ns, [] { return Socket::udp(); });
    for (uint64_t seq = 0; seq < 64 * kPerFrame; ++seq) {  // the driver busy when it dies
      ASSERT_TRUE(tx.send_to(lab.a().ip4, port, packet(seq)));
      if (seq % 32 == 31) std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    EXPECT_TRUE(child.kill()) << "the receiver's process ended before it was killed";
  }
  // A new session on the same veth and queue, its receiver placing every frame.
  {
    Rig rig(lab, s, 8);
    for (uint64_t seq = 0; seq < 8 * kPerFrame; ++seq) rig.send(packet(seq));
    rig.take(8);
    ASSERT_EQ(rig.infos.size(), 8u);
    for (uint64_t fi = 0; fi < 8; ++fi) {
      EXPECT_EQ(rig.infos[fi].first.index, fi);
      EXPECT_TRUE(rig.bytes[fi] == expected_frame(fi, 0)) << "frame " << fi;
    }
    EXPECT_EQ(rig.rx->stats().packets_placed, 8u * kPerFrame);
  }
  EXPECT_FALSE(xdp_attached(lab, lab.a())) << "an XDP program was left on " << lab.a().veth;
}


void xsk_jumbo_packets(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  constexpr uint32_t kJumbo = 8192;  // 8,242 bytes on the wire: three 4096-byte UMEM buffers
  constexpr uint64_t kFrames = 24;
  NetnsLab lab;
  lab.set_mtu(9000);
  Rig rig(lab, s, 64, kJumbo, 4096);
  for (uint64_t seq = 0; seq < kFrames * kPerFrame; ++seq) rig.send(packet(seq, kJumbo));
  rig.take(kFrames);
  rig.rx->stop();
  rig.drain();
  const gpu::PipelineStats st = rig.rx->stats();
  EXPECT_EQ(st.packets_in + rig.kernel_drops(), rig.sent);
  EXPECT_EQ(st.packets_placed, kFrames * kPerFrame);
  EXPECT_EQ(st.malformed + st.duplicate + st.late + st.no_buffer, 0u);
  ASSERT_EQ(rig.infos.size(), kFrames);
  for (uint64_t fi = 0; fi < kFrames; ++fi) {
    EXPECT_EQ(rig.infos[fi].first.index, fi);
    EXPECT_TRUE(rig.bytes[fi] == expected_frame(fi, 0, kJumbo)) << "frame " << fi;
  }
  EXPECT_NE(rig.session->rx_queue("x0", 0).stats().mode.find("multi-buffer"), std::string::npos);
}


void xsk_fill_ring_starved(const XskScenario& s) {
  NDQ_REQUIRE_AFXDP();
  constexpr uint32_t kUmem = 64;    // buffers lent to the kernel (the fill ring), nobody taking them yet
  constexpr uint64_t kEarly = 400;  // sent before the receiver starts: 64 placed, 336 dropped
  constexpr uint64_t kLate = 64;    // sent after: all placed
  NetnsLab lab;
  const uint16_t port = free_port(SOCK_DGRAM);
  Config cfg = afxdp_port_config(lab.a().veth, port, s.region);
  cfg.interfaces[0].options.get<AfxdpOptions>().fill_ring = kUmem;
  auto session = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(cfg); });
  Socket tx = lab.run_in(lab.b().ns, [] { return Socket::udp(); });
  for (uint64_t seq = 0; seq < kEarly; ++seq) ASSERT_TRUE(tx.send_to(lab.a().ip4, port, packet(seq)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const QueueStats early = session->rx_queue("x0", 0).stats();
  EXPECT_EQ(early.total_drops(), kEarly - kUmem) << describe(early);

  XskFrameReceiver rx(*session, "x0", reorder(64), s.driver);  // a frame buffer for every frame
  std::vector<gpu::FrameInfo> infos;
  std::vector<std::vector<std::byte>> bytes;
  auto drain = [&] {
    while (gpu::Frame f = rx.next_frame()) {
      infos.push_back(f.info());
      bytes.push_back(s.read_frame(f));
    }
  };
  // Each frame's packets once the receiver has taken every earlier one (their buffers are back
  // in the fill ring): never starved again, however the threads are scheduled.
  auto wait_taken = [&](uint64_t n) {
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
         rx.stats().packets_in < n && std::chrono::steady_clock::now() < until; drain())
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  };
  for (uint64_t seq = kEarly; seq < kEarly + kLate; ++seq) {
    if (seq % kPerFrame == 0) wait_taken(kUmem + (seq - kEarly));
    ASSERT_TRUE(tx.send_to(lab.a().ip4, port, packet(seq)));
    drain();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (rx.stats().packets_in < kUmem + kLate && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  rx.stop();
  drain();

  // Frames 0-7 (the 64 packets the buffers held), then 50-57; 8-49 never got a packet.
  const gpu::PipelineStats st = rx.stats();
  const uint64_t kernel = session->rx_queue("x0", 0).stats().total_drops();
  EXPECT_EQ(kEarly + kLate, st.packets_in + kernel) << "sent " << kEarly + kLate << ", taken " << st.packets_in
                                                    << ", the kernel dropped " << kernel;
  EXPECT_EQ(kernel, kEarly - kUmem);
  EXPECT_EQ(st.packets_placed, kUmem + kLate);
  EXPECT_EQ(st.duplicate + st.late + st.malformed + st.no_buffer, 0u);
  constexpr uint64_t kHeld = kUmem / kPerFrame;  // frames the held buffers complete
  EXPECT_EQ(st.frames_complete, kHeld + kLate / kPerFrame);
  EXPECT_EQ(st.frames_skipped, kEarly / kPerFrame - kHeld);
  ASSERT_EQ(infos.size(), kHeld + kLate / kPerFrame);
  for (size_t k = 0; k < infos.size(); ++k) {
    const uint64_t fi = k < kHeld ? k : kEarly / kPerFrame + (k - kHeld);
    EXPECT_EQ(infos[k].index, fi);
    EXPECT_TRUE(bytes[k] == expected_frame(fi, 0)) << "frame " << fi;
  }
}

}  // namespace ndqtest
