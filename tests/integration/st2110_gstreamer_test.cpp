// Issue 33's receive checked against an independent implementation: GStreamer's rtpvrawpay
// (gst_video.h) sends a moving test pattern as RFC 4175 / ST 2110-20 RTP, and netdaq's
// reorder mode rtp_video (frames: host, HostFrameAssembler) must rebuild GStreamer's own raw
// frames (filesink on the same pipeline) byte for byte, every frame, every line:
//  - St2110Harness: what GStreamer records is what it put on the wire (a kernel socket
//    receives exactly the recorded packets), and the recorded packets rebuild its raw frames
//    (this file's RFC 4175 reading, independent of src/protocols/);
//  - St2110GstLoopback: loopback, socket engine, UYVP (10-bit 4:2:2), UYVY (8-bit 4:2:2), RGB;
//    one run with the 16-bit sequence and the 32-bit timestamp wrapping inside the stream, one
//    at a width whose rows GStreamer pads to 4 bytes (padding stripped before comparing);
//  - St2110GstVeth: GStreamer in namespace B sends across a veth pair into namespace A's afxdp,
//    socket or dpdk (af_packet) engine, paced by a token bucket on B's veth; with losses,
//    every 16th or 32nd sequence number is taken off the path by tc (in one case chosen to hit
//    frames' last, marker packets), and each frame's per-line missing bitmap equals exactly
//    the lines those packets would have covered, the bytes that arrived still GStreamer's
//    (missing ones zero).
// Accounting in every run: packets GStreamer sent = packets the queue delivered + packets tc
// took off the path + drops netdaq counted (which must be 0 here), and the delivered ones are
// exactly the sequence numbers expected.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "afxdp_util.h"
#include "dpdk_util.h"
#include "gst_video.h"
#include "netdaq/host_frames.h"
#include "netdaq/video.h"
#include "st2110_path.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

// One case: the format, the frame width and where GStreamer starts its sequence and timestamp.
struct Case {
  std::string name;
  GstVideoFormat format;
  uint32_t width = 640, height = 480;
  uint32_t seqnum_offset = 1000, timestamp_offset = 123456;
};
std::string case_name(const ::testing::TestParamInfo<Case>& i) { return i.param.name; }
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The reorder block the users write (docs/video.md), with the case's format.
std::string reorder_yaml(const Case& c) {
  return "      reorder:\n"
         "        - queue: 0\n"
         "          mode: rtp_video\n"
         "          frames: host\n"
         "          video: {width: " + std::to_string(c.width) + ", height: " + std::to_string(c.height) +
         ", sampling: " + c.format.sampling + ", depth: " + std::to_string(c.format.depth) +
         ", exactframerate: 30, interlaced: false}\n"
         // A paced sender spreads a frame over its period (ST 2110-21: all of it); the default
         // 10 ms closes a 30 fps frame before its last lines arrive (counted late). 1 s: the
         // timeout runs on this test's clock, and a loaded CI machine may stall it for a while;
         // frames whose marker was lost close when frames 4 newer arrive, or at flush().
         "          frame_timeout_us: 1000000\n";
}

std::string socket_yaml(const Case& c, const std::string& ip, uint16_t port) {
  return "memory_regions:\n"
         "  - {name: bufs, kind: host, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n"
         "  - name: video\n"
         "    engine: socket\n"
         "    address: udp://" + ip + ":" + std::to_string(port) + "\n"
         "    rx:\n"
         "      queues:\n"
         "        - {id: 0, mode: direct, batch_size: 64, memory_regions: [bufs]}\n" +
         reorder_yaml(c) +
         "    socket:\n"
         "      rcvbuf: 8388608\n"  // a frame's burst (~560 packets) waits here while we place the last
         "log:\n"
         "  level: warn\n";
}

std::string afxdp_yaml(const Case& c, const std::string& veth, uint16_t port) {
  return "memory_regions:\n"
         "  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n"
         "  - name: video\n"
         "    engine: afxdp\n"
         "    address: " + veth + "\n"
         "    rx:\n"
         "      queues:\n"
         "        - {id: 0, mode: direct, batch_size: 64, memory_regions: [umem]}\n"
         "      flows:\n"
         "        - {id: 0, queue: 0, match: {udp_dst: " + std::to_string(port) + "}}\n" +
         reorder_yaml(c) +
         "log:\n"
         "  level: warn\n";
}

// A frame netdaq handed out, copied before release.
struct GotFrame {
  uint64_t frame = 0, stream = 0;
  Bytes bytes;
  bool complete = false;
  std::vector<bool> line_missing;  // from the presence bits
  std::vector<bool> video_missing; // netdaq::video_missing_lines (include/netdaq/video.h)
  uint32_t video_missing_count = 0;
};

// What one receive run gave.
struct Received {
  std::vector<GotFrame> frames;   // in pop order
  std::vector<uint16_t> seqs;     // RTP sequence of each packet the queue delivered
  uint64_t packets = 0;           // delivered by the queue
  uint64_t queue_drops = 0;       // counted by the engine (video_drops)
  std::string queue_stats;        // its counters, for failure messages
  HostFrameStats stats;
};

// Lines with a byte whose presence bit is clear, read from the bits directly (a second
// reading next to video_missing_lines; a granule across two lines marks both).
std::vector<bool> lines_missing_from_presence(const HostFrameView& f, uint64_t line_bytes, uint32_t height) {
  std::vector<bool> missing(height, false);
  const uint64_t granules = (f.bytes.size() + f.granule - 1) / f.granule;
  for (uint64_t g = 0; g < granules; ++g)
    if (!(f.presence[g / 64] >> (g % 64) & 1)) {
      const uint64_t first = g * f.granule, last = std::min<uint64_t>(first + f.granule, f.bytes.size()) - 1;
      for (uint64_t r = first / line_bytes; r <= last / line_bytes && r < height; ++r) missing[r] = true;
    }
  return missing;
}

// Drops the queue counted that could be GStreamer's packets: all but flow_miss, which on the
// dpdk af_packet driver (no rte_flow) are the lab kernels' own frames (IPv6 neighbour and
// multicast listener messages) that reach the veth; a video packet that matched no flow
// would be missing from the delivered ones and fail the accounting.
uint64_t video_drops(const QueueStats& s) { return s.total_drops() - s.drop(DropReason::flow_miss); }

// Polls rq into frames while GStreamer sends; after it exits, until every packet it sent is
// delivered, taken off the path (`off_path` says how many) or counted dropped, or 2 s passed.
Received receive_gst(RxQueue& rq, HostFrameAssembler& frames, const VideoOptions& video, GstVideoSender& gst,
                     const Case& c, const std::function<uint64_t()>& off_path) {
  Received r;
  std::vector<uint64_t> words((c.height + 63) / 64);
  const uint64_t line = c.format.line_bytes(c.width);
  const auto take = [&] {
    HostFrameView f;
    while (frames.pop(f)) {
      GotFrame g;
      g.frame = f.frame;
      g.stream = f.stream;
      g.bytes.assign(f.bytes.begin(), f.bytes.end());
      g.complete = f.complete;
      g.line_missing = lines_missing_from_presence(f, line, c.height);
      std::fill(words.begin(), words.end(), ~uint64_t{0});  // every bit must be written
      g.video_missing_count = video_missing_lines(video, f, words);
      for (uint32_t l = 0; l < c.height; ++l) g.video_missing.push_back(words[l / 64] >> (l % 64) & 1);
      r.frames.push_back(std::move(g));
      frames.release(f);
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::optional<std::chrono::steady_clock::time_point> settle;
  uint64_t sent = UINT64_MAX;
  while (std::chrono::steady_clock::now() < deadline) {
    RxBurst burst = rq.poll();
    if (!burst.empty()) {
      for (const Packet& p : burst) {
        const Bytes b = bytes_of(p);
        r.seqs.push_back(b.size() >= 4 ? be16(b, 2) : 0);
      }
      r.packets += burst.size();
      frames.receive(burst, now_ns());
      burst.release();
      take();
      continue;
    }
    if (!settle && !gst.running()) {
      settle = std::chrono::steady_clock::now() + 2s;
      gst.finish();
      sent = gst.packets().size();
    }
    if (settle) {
      r.queue_drops = video_drops(rq.stats());
      if (r.packets + off_path() + r.queue_drops >= sent || std::chrono::steady_clock::now() > *settle) break;
    }
  }
  frames.flush();
  take();
  r.queue_drops = video_drops(rq.stats());
  r.queue_stats = describe(rq.stats());
  r.stats = frames.stats();
  return r;
}

// The checks every run makes: GStreamer exited cleanly, its packets are what its raw frames
// say, every packet is accounted for, and netdaq's frames equal the expected ones.
void check_run(GstVideoSender& gst, const Case& c, const Received& got, const std::function<bool(uint16_t)>& lost_on_path,
               uint64_t off_path, uint32_t gst_ssrc) {
  ASSERT_EQ(gst.finish(), 0) << gst.describe();
  const std::vector<Bytes> raw = gst.raw_frames();
  const std::vector<RtpVideoPacket> sent = gst.packets();
  ASSERT_GT(sent.size(), 0u) << gst.describe();
  ASSERT_GE(raw.size(), 2u) << gst.describe();

  // Accounting: what GStreamer sent = delivered + taken off the path + counted drops.
  std::vector<bool> arrived(sent.size());
  uint64_t lost = 0;
  std::multiset<uint16_t> want_seqs;
  for (size_t i = 0; i < sent.size(); ++i) {
    arrived[i] = !lost_on_path(sent[i].seq);
    if (arrived[i]) want_seqs.insert(sent[i].seq);
    else ++lost;
  }
  EXPECT_EQ(got.queue_drops, 0u) << "the receiver kept up (the test paces the sender): " << got.queue_stats;
  EXPECT_EQ(off_path, lost) << "tc took exactly the chosen sequence numbers off the path";
  EXPECT_EQ(got.packets + off_path + got.queue_drops, sent.size()) << "every packet GStreamer sent is accounted for";
  EXPECT_EQ(std::multiset<uint16_t>(got.seqs.begin(), got.seqs.end()), want_seqs)
      << "the queue delivered exactly the packets that were not taken off the path";

  // What the frames must be: GStreamer's raw frames, where the arrived packets put bytes.
  std::vector<ExpectedFrame> want;
  ASSERT_NO_THROW(want = expected_frames(c.format, c.width, c.height, sent, arrived, raw)) << gst.describe();
  ASSERT_EQ(want.size(), raw.size()) << "one RTP timestamp per raw frame";
  if (lost == 0) {
    for (size_t k = 0; k < want.size(); ++k) ASSERT_EQ(want[k].bytes, raw[k]) << "GStreamer's packets rebuild frame " << k;
  }

  const uint64_t line = c.format.line_bytes(c.width);
  ASSERT_EQ(got.frames.size(), want.size()) << "one netdaq frame per GStreamer frame";
  uint64_t complete = 0, missing_bytes = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE("frame " + std::to_string(k));
    const GotFrame& g = got.frames[k];
    EXPECT_EQ(g.frame, got.frames[0].frame + k) << "frames numbered in order";
    EXPECT_EQ(g.stream, got.frames[0].stream);
    EXPECT_EQ(g.bytes.size(), line * c.height);
    EXPECT_TRUE(g.bytes == want[k].bytes) << "differ at " << differing_lines(g.bytes, want[k].bytes, line);
    EXPECT_EQ(g.complete, want[k].complete());
    EXPECT_EQ(g.line_missing, want[k].line_missing) << "lines with a presence bit clear";
    EXPECT_EQ(g.video_missing, want[k].line_missing) << "video_missing_lines: the per-line missing bitmap";
    EXPECT_EQ(g.video_missing_count, std::count(want[k].line_missing.begin(), want[k].line_missing.end(), true));
    EXPECT_EQ(g.stream, gst_ssrc) << "the stream is the SSRC";
    complete += want[k].complete() ? 1 : 0;
    missing_bytes += want[k].bytes_missing;
  }
  const HostFrameStats& s = got.stats;
  EXPECT_EQ(s.packets, got.packets);
  EXPECT_EQ(s.placed, got.packets) << "every delivered packet placed";
  EXPECT_EQ(s.duplicate + s.late + s.malformed + s.no_buffer + s.no_stream + s.control, 0u) << s.last_malformed;
  EXPECT_EQ(s.frames_complete, complete);
  EXPECT_EQ(s.frames_incomplete, want.size() - complete);
  EXPECT_EQ(s.frames_dropped, 0u);
  EXPECT_EQ(s.bytes_missing, missing_bytes);
}

// ---- the harness on its own: GStreamer's record is what it sent, and rebuilds its frames ----
class St2110Harness : public ::testing::TestWithParam<Case> {};

TEST_P(St2110Harness, st2110_GstreamerRecordIsWhatItSentAndRebuildsItsFrames) {
  NDQ_REQUIRE_GST();
  const Case& c = GetParam();
  Socket rx = Socket::udp_bound("127.0.0.1", 0);
  int big = 8 << 20;
  setsockopt(rx.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  setsockopt(rx.fd(), SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(rx.fd(), reinterpret_cast<sockaddr*>(&a), &len);

  GstVideoSend o;
  o.format = c.format;
  o.width = c.width;
  o.height = c.height;
  o.frames = 4;
  o.seqnum_offset = c.seqnum_offset;
  o.timestamp_offset = c.timestamp_offset;
  o.host = "127.0.0.1";
  o.port = ntohs(a.sin_port);
  GstVideoSender gst(o);
  std::vector<Bytes> wire;
  std::byte buf[9000];
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  std::optional<std::chrono::steady_clock::time_point> settle;
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = recv(rx.fd(), buf, sizeof buf, MSG_DONTWAIT);
    if (n >= 0) {
      wire.emplace_back(buf, buf + n);
      continue;
    }
    if (!settle && !gst.running()) settle = std::chrono::steady_clock::now() + 200ms;
    if (settle && std::chrono::steady_clock::now() > *settle) break;
    std::this_thread::sleep_for(200us);
  }
  ASSERT_EQ(gst.finish(), 0) << gst.describe();
  const std::vector<RtpVideoPacket> sent = gst.packets();
  ASSERT_EQ(wire.size(), sent.size()) << gst.describe();
  for (size_t i = 0; i < sent.size(); ++i) ASSERT_EQ(wire[i], sent[i].bytes) << "packet " << i;
  const std::vector<Bytes> raw = gst.raw_frames();
  ASSERT_EQ(raw.size(), o.frames);
  for (size_t k = 1; k < raw.size(); ++k) EXPECT_NE(raw[k], raw[k - 1]) << "the pattern moves: frames differ";
  const std::vector<ExpectedFrame> want = expected_frames(c.format, c.width, c.height, sent, {}, raw);
  ASSERT_EQ(want.size(), raw.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_TRUE(want[k].complete()) << "frame " << k;
    EXPECT_TRUE(want[k].bytes == raw[k]) << "frame " << k << ": " << differing_lines(want[k].bytes, raw[k], c.format.line_bytes(c.width));
  }
  EXPECT_TRUE(sent.back().marker);
  EXPECT_EQ(sent.front().seq, c.seqnum_offset & 0xffff);
  EXPECT_EQ(sent.front().ssrc, o.ssrc);
}

const Case kUyvp{"UYVP_640x480", gst_uyvp()};
const Case kUyvy{"UYVY_640x480", gst_uyvy()};
const Case kRgb{"RGB_640x480", gst_rgb()};
// 16-bit sequence wraps after 535 packets (GStreamer keeps the extended sequence at 0), the
// 32-bit timestamp after about 3 frames.
const Case kUyvpWraps{"UYVP_640x480_wraps", gst_uyvp(), 640, 480, 65000, 4294967295u - 9000};
// Rows of 642 x 3 = 1926 bytes: GStreamer pads them to 1928 (stripped before comparing).
const Case kRgbPadded{"RGB_642x480_padded_rows", gst_rgb(), 642, 480};
// UYVP rows of 644 / 2 x 5 = 1610 bytes, padded to 1612.
const Case kUyvpPadded{"UYVP_644x480_padded_rows", gst_uyvp(), 644, 480};
// 560 packets a frame (640x480 UYVP at mtu 1400): frame k's last packet is 1489 + 560 k + 559
// = 2048 + 560 k, a multiple of 32 for even k, so with every 32nd sequence number lost frames
// 0, 2, 4, 6 lose their marker.
const Case kUyvpMarkersLost{"UYVP_640x480_markers_lost", gst_uyvp(), 640, 480, 1489};

INSTANTIATE_TEST_SUITE_P(Formats, St2110Harness,
                         ::testing::Values(kUyvp, kUyvy, kRgb, kUyvpWraps, kRgbPadded, kUyvpPadded), case_name);

// ---- loopback, socket engine ----
class St2110GstLoopback : public ::testing::TestWithParam<Case> {};

TEST_P(St2110GstLoopback, st2110_GstreamerFramesEqualNetdaqFrames) {
  NDQ_REQUIRE_GST();
  const Case& c = GetParam();
  const uint16_t port = free_port(SOCK_DGRAM);
  const Config cfg = Config::parse(socket_yaml(c, "127.0.0.1", port), "st2110_socket.yaml");
  Session rx(cfg);
  RxQueue& rq = *rx.rx_queues().front();
  HostFrameAssembler frames(cfg.interfaces[0].rx.reorder[0]);

  GstVideoSend o;
  o.format = c.format;
  o.width = c.width;
  o.height = c.height;
  o.frames = 8;
  o.seqnum_offset = c.seqnum_offset;
  o.timestamp_offset = c.timestamp_offset;
  o.host = "127.0.0.1";
  o.port = port;
  GstVideoSender gst(o);
  const Received got = receive_gst(rq, frames, cfg.interfaces[0].rx.reorder[0].video, gst, c, [] { return uint64_t{0}; });
  check_run(gst, c, got, [](uint16_t) { return false; }, 0, o.ssrc);
}

INSTANTIATE_TEST_SUITE_P(Formats, St2110GstLoopback,
                         ::testing::Values(kUyvp, kUyvy, kRgb, kUyvpWraps, kRgbPadded, kUyvpPadded), case_name);

// ---- across a veth pair: GStreamer in namespace B, netdaq in A ----
enum class Engine { afxdp, socket, dpdk };
struct VethCase {
  Case video;
  Engine engine = Engine::afxdp;
  uint16_t drop_mask = 0;  // > 0: sequence numbers with (seq & drop_mask) == 0 are lost on the path
  std::string name;
  bool marker_lost = false;  // the sequence numbers are chosen so that some frames lose their marker
};
std::string veth_case_name(const ::testing::TestParamInfo<VethCase>& i) { return i.param.name; }
void PrintTo(const VethCase& c, std::ostream* os) { *os << c.name; }

class St2110GstVeth : public ::testing::TestWithParam<VethCase> {};

TEST_P(St2110GstVeth, st2110_GstreamerAcrossVethFramesAndMissingLines) {
  const VethCase& v = GetParam();
  const Case& c = v.video;
  if (v.engine == Engine::afxdp) {
    NDQ_REQUIRE_AFXDP();
  } else if (v.engine == Engine::dpdk) {
    NDQ_REQUIRE_DPDK();
  } else {
    NDQ_REQUIRE_ROOT();
  }
  NDQ_REQUIRE_GST();
  NDQ_REQUIRE_TOOL("tc", "iproute2");
  constexpr uint16_t kPort = 5004;
  NetnsLab lab;
  static_neighbour(lab, lab.b(), lab.a());
  pace_sender(lab, lab.b(), "400mbit");  // a 640x480 frame (< 1 MB) in < 20 ms, within 33 ms
  if (v.drop_mask) drop_rtp_sequences(lab, lab.b(), kPort, v.drop_mask);

  const Config cfg = Config::parse(
      v.engine == Engine::afxdp ? afxdp_yaml(c, lab.a().veth, kPort) : socket_yaml(c, lab.a().ip4, kPort),
      "st2110_veth.yaml");
  // dpdk: its af_packet driver on A's veth (every frame reaches it; no rte_flow there), the
  // reorder block the same.
  DpdkIface d;
  d.device = "net_af_packet0,iface=" + lab.a().veth + ",blocksz=12288,framesz=1536,framecnt=8192";
  d.num_bufs = 16384;
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(v.engine == Engine::dpdk ? d.build() : cfg); });
  RxQueue& rq = *rx->rx_queues().front();
  HostFrameAssembler frames(cfg.interfaces[0].rx.reorder[0]);

  GstVideoSend o;
  o.ns = lab.b().ns;
  o.format = c.format;
  o.width = c.width;
  o.height = c.height;
  o.frames = 8;
  o.seqnum_offset = c.seqnum_offset;
  o.timestamp_offset = c.timestamp_offset;
  o.host = lab.a().ip4;
  o.port = kPort;
  GstVideoSender gst(o);
  const auto off_path = [&] { return v.drop_mask ? rtp_sequences_dropped(lab, lab.b()) : uint64_t{0}; };
  const Received got = receive_gst(rq, frames, cfg.interfaces[0].rx.reorder[0].video, gst, c, off_path);
  const uint16_t mask = v.drop_mask;
  check_run(gst, c, got, [mask](uint16_t seq) { return mask != 0 && (seq & mask) == 0; }, off_path(), o.ssrc);
  if (mask) {
    EXPECT_LT(got.stats.frames_complete, got.frames.size()) << "losses made frames incomplete";
  }
  if (v.marker_lost) {  // the case is built so that frames lose their last packet (the marker)
    uint64_t markers_lost = 0;
    for (const RtpVideoPacket& p : gst.packets()) markers_lost += p.marker && (p.seq & mask) == 0 ? 1 : 0;
    EXPECT_GT(markers_lost, 0u) << "frames whose marker was lost close when newer frames push them out";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Paths, St2110GstVeth,
    ::testing::Values(VethCase{kUyvp, Engine::afxdp, 0, "afxdp_UYVP"}, VethCase{kUyvy, Engine::afxdp, 0, "afxdp_UYVY"},
                      VethCase{kRgb, Engine::afxdp, 0, "afxdp_RGB"},
                      VethCase{kUyvpWraps, Engine::afxdp, 0x1f, "afxdp_UYVP_wraps_every32nd_lost"},
                      VethCase{kUyvy, Engine::afxdp, 0x0f, "afxdp_UYVY_every16th_lost"},
                      VethCase{kUyvp, Engine::socket, 0x1f, "socket_UYVP_every32nd_lost"},
                      VethCase{kUyvpMarkersLost, Engine::afxdp, 0x1f, "afxdp_UYVP_markers_lost", true},
                      VethCase{kUyvp, Engine::dpdk, 0, "dpdk_af_packet_UYVP"},
                      VethCase{kUyvy, Engine::dpdk, 0x1f, "dpdk_af_packet_UYVY_every32nd_lost"}),
    veth_case_name);

}  // namespace
