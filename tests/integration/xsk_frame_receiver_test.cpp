// RxQueue::hand_over_rings and the GPU-driven receiver's loop run by a CPU thread
// (XskFrameReceiver::Driver::cpu) on a real AF_XDP socket on a veth: the ring protocol and
// every packet's fate, in CI. The same scenarios with the GPU driver: tests/gpu/xsk_gpu_receive_test.cpp.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <cstring>

#include "afxdp_util.h"
#include "netdaq/gpu_xsk.h"
#include "xsk_frames_scenario.h"

namespace ndqtest {
namespace {

using namespace netdaq;
using gpu::XskFrameReceiver;

XskScenario cpu_scenario() {
  XskScenario s;
  s.driver = XskFrameReceiver::Driver::cpu;
  s.read_frame = read_host_frame;
  return s;
}

TEST(XskFrameReceiver, CpuDriverPlacesEveryPacketAndCountsEveryFate) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_every_fate(cpu_scenario());
}

TEST(XskFrameReceiver, CpuDriverCountsPacketsWithNoFrameBufferAndRecovers) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_no_buffer(cpu_scenario());
}

TEST(XskFrameReceiver, CpuDriverCountsEveryPacketALossyLinkDroppedExactly) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_wire_loss(cpu_scenario());
}

TEST(XskFrameReceiver, CpuDriverCountsEveryPacketAStarvedFillRingCostExactly) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_fill_ring_starved(cpu_scenario());
}

TEST(XskFrameReceiver, CpuDriverPlacesJumboPacketsOfThreeBuffers) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_jumbo_packets(cpu_scenario());
}

TEST(XskFrameReceiver, CpuDriverKilledWithItsProcessLeavesAQueueANewSessionOpens) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_receiver_killed_then_reopened(cpu_scenario());
}

TEST(XskFrameReceiver, CpuDriverSessionAfterSessionOnOneVeth) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_session_after_session(cpu_scenario());
}

TEST(RingHandover, OnlyEnginesWithKernelSharedRingsInDirectModeOnce) {
  NDQ_REQUIRE_AFXDP();
  // socket engine: no rings to give.
  Config sc;
  sc.memory_regions.push_back(MemoryRegionConfig{"m", MemoryKind::host, 2048, 4096});
  InterfaceConfig si;
  si.name = "s0";
  si.engine = "socket";
  si.address = "udp://127.0.0.1:" + std::to_string(free_port(SOCK_DGRAM));
  QueueConfig q;
  q.memory_regions = {"m"};
  si.rx.queues.push_back(q);
  sc.interfaces.push_back(si);
  Session socket_session(sc);
  try {
    socket_session.rx_queue("s0").hand_over_rings();
    ADD_FAILURE() << "the socket engine handed over rings";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_NE(std::string(e.what()).find("no rings shared with the kernel"), std::string::npos) << e.what();
  }

  NetnsLab lab;
  auto ws = afxdp_rx_session(lab, PollMode::worker);
  try {
    ws->rx_queue("x0").hand_over_rings();
    ADD_FAILURE() << "a worker-mode queue handed over its rings";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("worker mode"), std::string::npos) << e.what();
  }
  ws.reset();

  auto ds = afxdp_rx_session(lab);
  const HandedOverRings r = ds->rx_queue("x0").hand_over_rings();
  EXPECT_NE(r.rx.producer, nullptr);
  EXPECT_NE(r.fill.entries, nullptr);
  EXPECT_EQ(r.rx.size & (r.rx.size - 1), 0u);
  EXPECT_EQ(r.chunk, 2048u);
  EXPECT_EQ(r.buffers, AfxdpIface{}.num_bufs);
  EXPECT_GE(r.fd, 0);
  // The span covers the ring's indices and entries, page aligned.
  for (const SharedRing* ring : {&r.rx, &r.fill}) {
    const auto lo = reinterpret_cast<uintptr_t>(ring->span), hi = lo + ring->span_bytes;
    EXPECT_EQ(lo % 4096, 0u);
    EXPECT_LE(lo, reinterpret_cast<uintptr_t>(ring->producer));
    EXPECT_GE(hi, reinterpret_cast<uintptr_t>(ring->entries) + ring->size * (ring == &r.rx ? 16u : 8u));
  }
  // The kernel holds the buffers the queue gave it before the hand-over.
  EXPECT_GT(*r.fill.producer, 0u);
  try {
    ds->rx_queue("x0").hand_over_rings();
    ADD_FAILURE() << "rings handed over twice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("handed over already"), std::string::npos) << e.what();
  }
}

TEST(XskFrameReceiver, ConfigItCannotServeIsRefusedNamingTheKeyAndKeepsTheRings) {
  NDQ_REQUIRE_GPU_BUILD();
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  auto session = afxdp_rx_session(lab);
  ReorderConfig r;
  r.payload_size = 64;
  r.packets_per_frame = 4;
  auto refused = [&](ReorderConfig c, const std::string& key) {
    try {
      XskFrameReceiver rx(*session, "x0", c, XskFrameReceiver::Driver::cpu);
      ADD_FAILURE() << key << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_config);
      EXPECT_NE(std::string(e.what()).find("rx.reorder." + key), std::string::npos) << e.what();
    }
  };
  ReorderConfig c = r;
  c.mode = ReorderMode::spead;
  refused(c, "mode");
  c = r;
  c.max_open_frames = 17;
  refused(c, "max_open_frames");
  c = r;
  c.frame_buffers = c.max_open_frames;
  refused(c, "frame_buffers");
  c = r;
  c.payload_size = 0;
  refused(c, "payload_size");
  c = r;
  c.output = SampleFormat::fp16;
  refused(c, "output");
  // None of them took the queue's rings.
  EXPECT_NO_THROW(XskFrameReceiver(*session, "x0", r, XskFrameReceiver::Driver::cpu));
}

}  // namespace
}  // namespace ndqtest
