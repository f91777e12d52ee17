// TxQueue::hand_over_rings and the GPU-driven sender's loop run by a CPU thread
// (XskFrameSender::Driver::cpu) on a real AF_XDP socket on a veth, received by the
// GPU-driven receiver's CPU driver on the other end: the ring protocol, every byte and every
// packet, in CI. The same scenarios with the GPU drivers: tests/gpu/xsk_gpu_send_test.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <sys/socket.h>

#include <cstring>

#include "afxdp_util.h"
#include "netdaq/gpu_xsk_send.h"
#include "xsk_frames_scenario.h"
#include "xsk_send_scenario.h"

namespace ndqtest {
namespace {

using namespace netdaq;
using gpu::XskFrameSender;

XskSendScenario cpu_scenario() {
  XskSendScenario s;
  s.upload = [](const std::vector<std::byte>& b) -> std::shared_ptr<const void> {
    auto copy = std::make_shared<std::vector<std::byte>>(b);
    return {copy, copy->data()};
  };
  s.read_frame = read_host_frame;
  return s;
}

TEST(XskFrameSender, CpuDriverSendsEveryFrameByteForByte) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_send_round_trip(cpu_scenario());
}

TEST(XskFrameSender, CpuDriverSendsJumboFramesAcrossThreeBuffersEach) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_send_jumbo_round_trip(cpu_scenario());
}

TEST(XskFrameSender, CpuDriverSessionAfterSessionOnOneVeth) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_send_session_after_session(cpu_scenario());
}

TEST(XskFrameSender, CpuDriverReplacedWhileTheReceiverRuns) {
  NDQ_REQUIRE_GPU_BUILD();
  xsk_sender_replaced_while_receiving(cpu_scenario());
}

// A tx queue's session on B's veth sending to A; options as given.
std::unique_ptr<Session> tx_session(NetnsLab& lab, AfxdpOptions opts = {}) {
  AfxdpIface iface{.dev = lab.b().veth, .tx_queue = 0, .afxdp = opts};
  if (!opts.tx_raw_frames) {  // raw frames: the application writes every header
    iface.destination = "udp://" + lab.a().ip4 + ":9";
    iface.dst_mac = lab.mac(lab.a());
  }
  return lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(iface.build()); });
}

template <class F>
std::string refusal(F&& f, Errc want) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(TxRingHandover, GivesRingsBuffersAndHeadersOnceAndOnlyWhereTheKernelSharesThem) {
  NDQ_REQUIRE_AFXDP();
  // socket engine: no rings to give.
  Config sc;
  sc.memory_regions.push_back(MemoryRegionConfig{"m", MemoryKind::host, 2048, 4096});
  InterfaceConfig si;
  si.name = "s0";
  si.engine = "socket";
  si.address = "udp://127.0.0.1:0";
  si.tx.destination = "udp://127.0.0.1:9";
  QueueConfig q;
  q.memory_regions = {"m"};
  si.tx.queues.push_back(q);
  sc.interfaces.push_back(si);
  Session socket_session(sc);
  EXPECT_NE(refusal([&] { socket_session.tx_queue("s0").hand_over_rings(1008, 64); }, Errc::unsupported)
                .find("no rings shared with the kernel"),
            std::string::npos);

  NetnsLab lab;
  // Raw frames: the queue has no headers for the new producer.
  AfxdpOptions raw;
  raw.tx_raw_frames = true;
  auto rs = tx_session(lab, raw);
  EXPECT_NE(refusal([&] { rs->tx_queue("x0").hand_over_rings(1008, 64); }, Errc::unsupported).find("tx_raw_frames"),
            std::string::npos);
  rs.reset();

  auto s = tx_session(lab);
  TxQueue& txq = s->tx_queue("x0");
  // A payload that does not fit a buffer with the headers.
  // More than 16 buffers for one packet: refused (a multi-buffer socket takes a packet of up to
  // 16; a single-buffer one, of one).
  EXPECT_NE(refusal([&] { txq.hand_over_rings(40000, 64); }, Errc::unsupported).find("buf_size 2048"), std::string::npos);
  const bool multi = txq.stats().mode.find("multi-buffer") != std::string::npos;
  if (!multi) {
    EXPECT_NE(refusal([&] { txq.hand_over_rings(2048, 64); }, Errc::unsupported).find("single-buffer"), std::string::npos);
  }
  const HandedOverTxRings r = txq.hand_over_rings(1008, 64);
  EXPECT_EQ(r.multi_buffer, multi);
  EXPECT_EQ(r.buffer_bytes, 2048u);
  EXPECT_EQ(r.buffers.size(), 64u);
  for (uint64_t b : r.buffers) EXPECT_EQ(b % r.chunk, 0u);
  EXPECT_EQ(r.chunk, 2048u);
  EXPECT_NE(r.tx.producer, nullptr);
  EXPECT_NE(r.completion.entries, nullptr);
  EXPECT_GE(r.fd, 0);
  // Ethernet to A's MAC, IPv4 with the payload's length and a valid checksum, UDP to port 9.
  ASSERT_EQ(r.headers.size(), 42u);
  const auto* h = reinterpret_cast<const uint8_t*>(r.headers.data());
  EXPECT_EQ(h[12], 0x08);
  EXPECT_EQ(h[13], 0x00);
  EXPECT_EQ((h[16] << 8) | h[17], 20 + 8 + 1008);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += (h[14 + i] << 8) | h[15 + i];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(sum, 0xffffu) << "IPv4 header checksum";
  EXPECT_EQ((h[36] << 8) | h[37], 9);
  EXPECT_EQ((h[38] << 8) | h[39], 8 + 1008);
  // The queue hands out nothing more, and says so in its mode.
  EXPECT_EQ(txq.allocate(4).size(), 0u);
  EXPECT_NE(txq.stats().mode.find("rings handed over"), std::string::npos) << txq.stats().mode;
  EXPECT_NE(refusal([&] { txq.hand_over_rings(1008, 64); }, Errc::invalid_config).find("handed over already"),
            std::string::npos);
}

// The permissions of the mapping at `p` in /proc/self/maps ("rw-s", "---p"), or "" if unmapped.
std::string mapping_at(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    uintptr_t lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= a && a < hi) return perms;
  }
  return "";
}

// A new owner that keeps a ring's address (as a GPU driver does while its CUDA registration of
// the ring outlives the socket) gets it kept: when the queue goes, an inaccessible mapping holds
// the span (the socket itself is released: a new session opens the same queue) until the owner
// lets go. Without a holder the span is simply unmapped.
TEST(TxRingHandover, AnAddressTheNewOwnerHoldsStaysReservedAfterTheQueueGoes) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  std::shared_ptr<void> held;
  void* tx_span = nullptr;
  void* comp_span = nullptr;
  {
    auto s = tx_session(lab);
    HandedOverTxRings r = s->tx_queue("x0", 0).hand_over_rings(1008, 64);
    EXPECT_EQ(mapping_at(r.tx.span), "rw-s");  // the kernel's ring, shared
    held = r.tx.address_hold;
    tx_span = r.tx.span;
    comp_span = r.completion.span;
  }
  EXPECT_EQ(mapping_at(tx_span), "---p") << "the held TX ring's span is not reserved";
  EXPECT_EQ(mapping_at(comp_span), "") << "the completion ring, not held, is not unmapped";
  {
    auto s = tx_session(lab);  // the old socket is gone: the queue opens again
    EXPECT_EQ(s->tx_queue("x0", 0).allocate(4).size(), 4u);
  }
  held.reset();
  EXPECT_EQ(mapping_at(tx_span), "") << "the reservation outlived the last holder";
}

TEST(XskFrameSender, LayoutItCannotSendIsRefusedNamingTheFieldAndKeepsTheRings) {
  NDQ_REQUIRE_GPU_BUILD();
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  auto s = tx_session(lab);
  gpu::XskSendLayout l;
  l.payload_size = 64;
  l.packets_per_frame = 4;
  auto refused = [&](gpu::XskSendLayout c, const std::string& key) {
    const std::string what =
        refusal([&] { XskFrameSender tx(*s, "x0", 0, c, XskFrameSender::Driver::cpu); }, Errc::invalid_config);
    EXPECT_NE(what.find(": " + key + ":"), std::string::npos) << what;
  };
  gpu::XskSendLayout c = l;
  c.payload_size = 0;
  refused(c, "payload_size");
  c = l;
  c.seq_bits = 24;
  refused(c, "seq_bits");
  c = l;
  c.seq_offset = 6;  // bytes 6-9 run into the samples at 8
  refused(c, "seq_offset");
  c = l;
  c.frames_in_flight = 0;
  refused(c, "frames_in_flight");
  // None of them took the queue's rings.
  EXPECT_NO_THROW(XskFrameSender(*s, "x0", 0, l, XskFrameSender::Driver::cpu));
}

}  // namespace
}  // namespace ndqtest
