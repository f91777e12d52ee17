// afxdp multi-buffer receive (XDP_USE_SG, frags-aware steering program) on a veth pair at
// MTU 9000 between two namespaces (native XDP on veth, copy mode, 4096-byte UMEM chunks):
// a frame larger than one chunk's room (4096 - 256 = 3840 bytes) comes as two descriptors and
// is handed over as one Packet of two segments; a frame of three is dropped and counted
// oversize with its buffers back in the pool. The sender is a kernel UDP socket.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <future>
#include <functional>
#include <sstream>
#include <memory>
#include <thread>

#include "accounting.h"
#include "afxdp_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

constexpr size_t kHeaders = 14 + 20 + 8;  // Ethernet, IPv4, UDP
constexpr size_t kChunk = 4096;
constexpr size_t kRoom = kChunk - 256;    // a chunk less XDP_PACKET_HEADROOM

// A lab with both veth ends at `mtu` and B's ARP entry for A resolved (a ping), so that the
// kernel sender queues nothing behind ARP.
struct JumboLab {
  explicit JumboLab(int mtu) {
    lab.set_mtu(mtu);
    std::string out;
    if (lab.exec_in(lab.b().ns, {"ping", "-c", "1", "-W", "2", lab.a().ip4}, &out) != 0)
      throw std::runtime_error("ping A from B failed: " + out);
  }
  NetnsLab lab;
};

// What the receiver saw of one packet.
struct Got {
  Bytes bytes;             // segments concatenated
  unsigned segments = 0;
  size_t seg0 = 0, seg1 = 0;
  bool frame_ok = false;   // one segment: frame() = headers + payload; two: frame() empty
  bool shape_ok = false;   // two segments: segment 0 directly after the 42 header bytes in its chunk
  uint32_t flow = 0;
};

Got inspect(const Packet& p) {
  Got g;
  g.bytes = bytes_of(p);
  g.segments = p.segments();
  g.seg0 = p.segment(0).size();
  g.seg1 = p.segments() > 1 ? p.segment(1).size() : 0;
  g.flow = p.flow();
  if (p.segments() == 1) {
    g.frame_ok = p.frame().size() == p.size() + kHeaders && p.frame().data() + kHeaders == p.data().data();
    g.shape_ok = true;
  } else {
    g.frame_ok = p.frame().empty();
    // Copy mode fills the first buffer to its room: headers + segment 0 = 3840 bytes.
    g.shape_ok = kHeaders + g.seg0 == kRoom && g.seg1 > 0;
  }
  return g;
}

// Polls q until `count` packets arrived or `timeout` passed (then 50 ms more for extras).
std::vector<Got> collect_packets(RxQueue& q, size_t count, std::chrono::milliseconds timeout,
                                 std::atomic<size_t>* progress) {
  std::vector<Got> all;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto settle_end = std::chrono::steady_clock::time_point::max();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || now >= settle_end) break;
    RxBurst b = q.poll();
    for (const Packet& p : b) all.push_back(inspect(p));
    b.release();
    if (progress) progress->store(all.size(), std::memory_order_relaxed);
    if (all.size() >= count && settle_end == std::chrono::steady_clock::time_point::max())
      settle_end = now + 50ms;
    if (b.empty()) std::this_thread::sleep_for(100us);
  }
  return all;
}

// Sends payloads[i] (A's port, from a kernel UDP socket in B) for i in [from, to); with a
// window, waits while more than `window` of them are beyond delivered(). Returns how many
// sendto() accepted.
size_t send_kernel(NetnsLab& lab, uint16_t port, const std::vector<Bytes>& payloads, size_t from, size_t to,
                   const std::function<size_t()>& delivered = {}, size_t window = 0) {
  return lab.run_in(lab.b().ns, [&] {
    Socket s = Socket::udp();
    size_t sent = 0;
    for (size_t i = from; i < to; ++i) {
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      while (window && from + sent > delivered() + window && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(50us);
      if (s.send_to(lab.a().ip4, port, payloads[i])) ++sent;
    }
    return sent;
  });
}

AfxdpIface receiver(const NetnsLab& lab, uint16_t port, XdpAttach attach = XdpAttach::automatic) {
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {0}, .flows = {udp_flow(1, 0, port)}, .buf_size = kChunk};
  rs.afxdp.attach = attach;
  return rs;
}

// Checks every packet against the payload its sequence number says was sent (frames[seq]
// bytes on the wire), each sequence number once; the shape of one- and two-segment packets.
::testing::AssertionResult all_intact(const std::vector<Got>& got, const std::vector<size_t>& frames) {
  std::vector<int> seen(frames.size(), 0);
  std::ostringstream why;
  size_t bad = 0;
  for (const Got& g : got) {
    const uint64_t seq = payload_seq(g.bytes);
    std::string what;
    if (seq >= frames.size()) {
      what = "unknown sequence " + std::to_string(seq);
    } else {
      const size_t frame = frames[seq];
      const unsigned segs = frame > kRoom ? 2 : 1;
      if (seen[seq]++) what = "duplicate";
      else if (auto c = check_payload(g.bytes, seq, frame - kHeaders); !c) what = c.message();
      else if (g.segments != segs) what = std::to_string(g.segments) + " segments, expected " + std::to_string(segs);
      else if (!g.frame_ok) what = "frame() wrong for " + std::to_string(g.segments) + " segments";
      else if (!g.shape_ok) what = "segments " + std::to_string(g.seg0) + " + " + std::to_string(g.seg1);
      else if (g.flow != 1) what = "flow " + std::to_string(g.flow);
    }
    if (!what.empty() && bad++ < 5) why << "\n  seq " << seq << ": " << what;
  }
  size_t missing = 0;
  for (int n : seen) missing += n == 0;
  if (bad == 0 && missing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " bad packets, " << missing << " missing of " << frames.size()
                                       << why.str();
}

// Frames of 1000, 3800, 4174 (RoCE MTU 4096), 6000 and 7600 bytes at MTU 9000: those above
// 3840 bytes arrive as two segments, every payload byte intact. The first 201 frames are in
// the RX ring before the first poll, so a batch of 64 descriptors ends inside a two-buffer
// frame (descriptor 63 is the first of a 7600-byte frame): the cut frame is delivered whole.
void jumbo_frames_intact(XdpAttach attach, uint16_t port) {
  JumboLab jl(9000);
  NetnsLab& lab = jl.lab;
  const std::vector<size_t> sizes = {1000, 3800, 4174, 6000, 7600};
  const size_t groups1 = 40, groups2 = 200;
  std::vector<size_t> frames = {1000};
  for (size_t g = 0; g < groups1 + groups2; ++g) frames.insert(frames.end(), sizes.begin(), sizes.end());
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < frames.size(); ++i) payloads.push_back(make_payload(i, frames[i] - kHeaders));
  const size_t first = 1 + groups1 * sizes.size(), n = frames.size();
  size_t two = 0;
  for (size_t f : frames) two += f > kRoom;

  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(receiver(lab, port, attach).build()); });
  auto& q = rx->rx_queue("x0");
  size_t sent = send_kernel(lab, port, payloads, 0, first);
  std::this_thread::sleep_for(300ms);  // all of them in the RX ring before the first poll
  std::atomic<size_t> arrived{0};
  auto got = std::async(std::launch::async, [&] { return collect_packets(q, n, 20s, &arrived); });
  sent += send_kernel(lab, port, payloads, first, n, [&] { return arrived.load(); }, 128);
  const auto received = got.get();
  EXPECT_EQ(sent, n);
  EXPECT_TRUE(all_intact(received, frames));
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(sent, received.size(), {st}));
  EXPECT_EQ(st.packets, n) << describe(st);
  EXPECT_EQ(st.total_drops(), 0u) << describe(st);
  EXPECT_EQ(engine_counter(st, "multi_buffer_frames"), two);
  EXPECT_EQ(engine_counter(st, "oversize_frames"), 0u);
  EXPECT_NE(st.mode.find("copy"), std::string::npos) << st.mode;
  EXPECT_NE(st.mode.find("multi-buffer"), std::string::npos) << st.mode;
  uint64_t bytes = 0;
  for (size_t f : frames) bytes += f - kHeaders;
  EXPECT_EQ(st.bytes, bytes) << "bytes are UDP payload bytes, both segments";
  // The frags-aware program attaches natively to veth at MTU 9000 (a plain one is refused).
  const char* xdp = attach == XdpAttach::generic ? "generic XDP" : "native XDP";
  EXPECT_NE(st.mode.find(xdp), std::string::npos) << st.mode;
  const auto fs = rx->flow_stats();
  uint64_t flow_bytes = 0;
  for (const auto& r : fs)
    if (!r.unmatched && r.flow == 1) flow_bytes = r.bytes;
  uint64_t wire = 0;
  for (size_t f : frames) wire += f;
  EXPECT_EQ(flow_bytes, wire) << "the program counts whole frames (bpf_xdp_get_buff_len)";
}

TEST(AfxdpMultibuffer, JumboFramesArriveInTwoSegmentsIntact) {
  NDQ_REQUIRE_AFXDP();
  jumbo_frames_intact(XdpAttach::automatic, 46300);
}

TEST(AfxdpMultibuffer, JumboFramesGenericXdpArriveInTwoSegmentsIntact) {
  NDQ_REQUIRE_AFXDP();
  jumbo_frames_intact(XdpAttach::generic, 46303);
}

// 8000-byte frames need three buffers: each is dropped, counted oversize (and in the engine's
// oversize_frames), its three buffers back in the pool; small frames between them arrive.
TEST(AfxdpMultibuffer, ThreeBufferFramesCountedOversizeNothingLeaked) {
  NDQ_REQUIRE_AFXDP();
  JumboLab jl(9000);
  NetnsLab& lab = jl.lab;
  const uint16_t port = 46301;
  const size_t pairs = 64;  // 64 x (3 + 1) buffers: a multiple of the refill batch (64)
  std::vector<size_t> frames;
  for (size_t i = 0; i < pairs; ++i) frames.insert(frames.end(), {8000, 1000});
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < frames.size(); ++i) payloads.push_back(make_payload(i, frames[i] - kHeaders));

  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(receiver(lab, port).build()); });
  auto& q = rx->rx_queue("x0");
  const uint64_t in_use_before = q.stats().pool_in_use;
  ASSERT_GT(in_use_before, 0u) << "the fill ring holds the pool's buffers";
  std::atomic<size_t> arrived{0};
  auto got = std::async(std::launch::async, [&] { return collect_packets(q, pairs, 15s, &arrived); });
  const size_t sent =
      send_kernel(lab, port, payloads, 0, frames.size(), [&] { return 2 * arrived.load(); }, 64);
  const auto received = got.get();
  EXPECT_EQ(sent, frames.size());
  ASSERT_EQ(received.size(), pairs);
  for (const Got& g : received) {
    const uint64_t seq = payload_seq(g.bytes);
    ASSERT_EQ(seq % 2, 1u) << "an 8000-byte frame was delivered";
    EXPECT_TRUE(check_payload(g.bytes, seq, 1000 - kHeaders));
    EXPECT_EQ(g.segments, 1u);
  }
  q.poll().release();  // one more receive: the fill ring is topped up from the pool
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(sent, received.size(), {st}));
  EXPECT_EQ(st.drop(DropReason::oversize), pairs) << describe(st);
  EXPECT_EQ(engine_counter(st, "oversize_frames"), pairs);
  EXPECT_EQ(engine_counter(st, "multi_buffer_frames"), 0u);
  EXPECT_EQ(st.total_drops(), pairs) << describe(st);
  EXPECT_EQ(st.pool_in_use, in_use_before) << "every buffer of the dropped frames went back to the pool";
}

// At the default MTU small and MTU-sized frames stay one segment with the whole frame in
// frame(), also with the socket bound multi-buffer.
TEST(AfxdpMultibuffer, NormalFramesStaySingleSegment) {
  NDQ_REQUIRE_AFXDP();
  JumboLab jl(1500);
  NetnsLab& lab = jl.lab;
  const uint16_t port = 46302;
  std::vector<size_t> frames;
  for (size_t i = 0; i < 2000; ++i) frames.push_back(i % 2 ? 1514 : 60 + i % 300);
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < frames.size(); ++i) payloads.push_back(make_payload(i, frames[i] - kHeaders));
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(receiver(lab, port).build()); });
  auto& q = rx->rx_queue("x0");
  std::atomic<size_t> arrived{0};
  auto got = std::async(std::launch::async, [&] { return collect_packets(q, frames.size(), 15s, &arrived); });
  const size_t sent = send_kernel(lab, port, payloads, 0, frames.size(), [&] { return arrived.load(); }, 128);
  const auto received = got.get();
  EXPECT_EQ(sent, frames.size());
  EXPECT_TRUE(all_intact(received, frames));
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(sent, received.size(), {st}));
  EXPECT_EQ(st.total_drops(), 0u) << describe(st);
  EXPECT_EQ(engine_counter(st, "multi_buffer_frames"), 0u);
  EXPECT_NE(st.mode.find("multi-buffer"), std::string::npos) << st.mode;
}

}  // namespace
