// Issue 33, interlaced: GStreamer 1.22's rtpvrawpay sends interlaced video (videotestsrc caps
// interlace-mode=interleaved: both fields in each raw frame, each field its own RTP frame with
// its own timestamp) numbering SRD rows by the FRAME's lines (0, 2, 4 ... with F = 0; 1, 3,
// 5 ... with F = 1), where SMPTE ST 2110-20 numbers them within the field. netdaq reads it with
// rx.reorder[].video.rows: frame (loopback, socket engine, frames: host) and its frames must
// equal GStreamer's raw frames (filesink on the same pipeline) byte for byte, every frame and
// line. The same stream into the default (rows: field) receiver is refused where it must be:
// exactly the packets with a row beyond a field's height / 2, counted malformed.
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "gst_video.h"
#include "netdaq/host_frames.h"
#include "netdaq/session.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kWidth = 640, kHeight = 480, kFrames = 8;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

std::string socket_yaml(uint16_t port, const char* rows) {
  return "memory_regions:\n"
         "  - {name: bufs, kind: host, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n"
         "  - name: video\n"
         "    engine: socket\n"
         "    address: udp://127.0.0.1:" + std::to_string(port) + "\n"
         "    rx:\n"
         "      queues:\n"
         "        - {id: 0, mode: direct, batch_size: 64, memory_regions: [bufs]}\n"
         "      reorder:\n"
         "        - queue: 0\n"
         "          mode: rtp_video\n"
         "          frames: host\n"
         "          video: {width: " + std::to_string(kWidth) + ", height: " + std::to_string(kHeight) +
         ", sampling: YCbCr-4:2:2, depth: 10, exactframerate: 30, interlaced: true, rows: " + rows + "}\n"
         "          frame_timeout_us: 1000000\n"  // the test's clock; a stalled CI run must not time frames out
         "    socket:\n"
         "      rcvbuf: 8388608\n"
         "log:\n"
         "  level: warn\n";
}

struct Got {
  std::vector<Bytes> raw;              // GStreamer's raw frames of this run
  std::vector<RtpVideoPacket> sent;    // and every packet it sent
  std::string gst;                     // its command line and output
  std::vector<Bytes> frames;
  std::vector<bool> complete;
  uint64_t packets = 0;
  HostFrameStats stats;
  std::string queue_stats;
};

// Receives GStreamer's stream until it exited and every packet it sent was delivered or 2 s
// passed (60 s at most in all); with GStreamer's record of the run.
Got receive(const Config& cfg, GstVideoSend o) {
  Session rx(cfg);
  RxQueue& rq = *rx.rx_queues().front();
  HostFrameAssembler frames(cfg.interfaces[0].rx.reorder[0]);
  GstVideoSender gst(o);
  Got g;
  const auto take = [&] {
    HostFrameView f;
    while (frames.pop(f)) {
      g.frames.emplace_back(f.bytes.begin(), f.bytes.end());
      g.complete.push_back(f.complete);
      frames.release(f);
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::optional<std::chrono::steady_clock::time_point> settle;
  uint64_t sent = UINT64_MAX;
  while (std::chrono::steady_clock::now() < deadline) {
    RxBurst burst = rq.poll();
    if (!burst.empty()) {
      g.packets += burst.size();
      frames.receive(burst, now_ns());
      burst.release();
      take();
      continue;
    }
    if (!settle && !gst.running()) {
      settle = std::chrono::steady_clock::now() + 2s;
      EXPECT_EQ(gst.finish(), 0) << gst.describe();
      sent = gst.packets().size();
    }
    if (settle && (g.packets + rq.stats().total_drops() >= sent || std::chrono::steady_clock::now() > *settle)) break;
  }
  frames.flush();
  take();
  g.stats = frames.stats();
  g.queue_stats = describe(rq.stats());
  EXPECT_EQ(gst.finish(), 0) << gst.describe();
  g.raw = gst.raw_frames();
  g.sent = gst.packets();
  g.gst = gst.describe();
  EXPECT_EQ(rq.stats().total_drops(), 0u) << g.queue_stats;
  EXPECT_EQ(g.packets, sent) << "every packet GStreamer sent was delivered: " << g.queue_stats;
  return g;
}

GstVideoSend gst_options(uint16_t port) {
  GstVideoSend o;
  o.format = gst_uyvp();
  o.width = kWidth;
  o.height = kHeight;
  o.frames = kFrames;
  o.interlaced = true;
  o.host = "127.0.0.1";
  o.port = port;
  return o;
}

// GStreamer's own record, read here from RFC 4175 alone: rows are frame lines with their
// field's parity, and placing each segment at its row rebuilds the raw frames (two RTP
// timestamps, one per field, to each raw frame).
void check_gstreamer_record(const Got& g) {
  const std::vector<RtpVideoPacket>& sent = g.sent;
  const std::vector<Bytes>& raw = g.raw;
  const uint64_t line = gst_uyvp().line_bytes(kWidth);
  ASSERT_EQ(raw.size(), kFrames) << g.gst;
  std::vector<Bytes> rebuilt;
  std::vector<uint32_t> stamps;
  uint32_t max_row = 0;
  for (const RtpVideoPacket& p : sent) {
    if (stamps.empty() || p.timestamp != stamps.back()) {
      stamps.push_back(p.timestamp);
      if (stamps.size() % 2 == 1) rebuilt.emplace_back(line * kHeight, std::byte{0});
    }
    for (const RtpSegment& s : p.segments) {
      ASSERT_EQ(s.row % 2, s.field ? 1u : 0u) << "GStreamer numbers rows by frame line, even in field 0, odd in 1";
      ASSERT_EQ(s.field, stamps.size() % 2 == 0) << "each field is its own RTP frame, field 0 first";
      ASSERT_LT(s.row, kHeight);
      ASSERT_LE(s.offset / 2 * 5 + s.length, line);
      max_row = std::max(max_row, s.row);
      std::copy_n(p.bytes.begin() + s.at, s.length, rebuilt.back().begin() + s.row * line + s.offset / 2 * 5);
    }
  }
  EXPECT_EQ(max_row, kHeight - 1) << "rows reach the frame's last line (not a field's height / 2)";
  ASSERT_EQ(stamps.size(), 2 * raw.size()) << "two fields, two timestamps, a frame";
  for (size_t k = 0; k < raw.size(); ++k) EXPECT_TRUE(rebuilt[k] == raw[k]) << "GStreamer's packets rebuild frame " << k;
  for (size_t k = 1; k < raw.size(); ++k) EXPECT_NE(raw[k], raw[k - 1]) << "the pattern moves";
}

TEST(St2110GstInterlaced, st2110_InterlacedFrameRowsFramesEqualGstreamers) {
  NDQ_REQUIRE_GST();
  const uint16_t port = free_port(SOCK_DGRAM);
  const Config cfg = Config::parse(socket_yaml(port, "frame"), "st2110_interlaced.yaml");
  ASSERT_EQ(cfg.interfaces[0].rx.reorder[0].video.rows, VideoRows::frame);
  const Got got = receive(cfg, gst_options(port));
  check_gstreamer_record(got);
  const std::vector<Bytes>& raw = got.raw;

  const uint64_t line = gst_uyvp().line_bytes(kWidth);
  ASSERT_EQ(got.frames.size(), raw.size()) << "one netdaq frame per GStreamer frame";
  for (size_t k = 0; k < raw.size(); ++k) {
    EXPECT_TRUE(got.complete[k]) << "frame " << k;
    EXPECT_TRUE(got.frames[k] == raw[k]) << "frame " << k << " differs at " << differing_lines(got.frames[k], raw[k], line);
  }
  const HostFrameStats& s = got.stats;
  EXPECT_EQ(s.placed, got.packets) << "every packet placed";
  EXPECT_EQ(s.malformed + s.late + s.duplicate + s.no_buffer + s.no_stream, 0u) << s.last_malformed;
  EXPECT_EQ(s.frames_complete, kFrames);
  EXPECT_EQ(s.frames_incomplete + s.frames_dropped, 0u);
}

TEST(St2110GstInterlaced, st2110_InterlacedGstreamerRowsIntoFieldRowsReceiverAreRefused) {
  NDQ_REQUIRE_GST();
  const uint16_t port = free_port(SOCK_DGRAM);
  const Config cfg = Config::parse(socket_yaml(port, "field"), "st2110_interlaced.yaml");
  const Got got = receive(cfg, gst_options(port));
  // A packet is refused when one of its rows is beyond a field's 240: GStreamer's frame rows.
  uint64_t beyond = 0;
  for (const RtpVideoPacket& p : got.sent)
    beyond += std::any_of(p.segments.begin(), p.segments.end(), [](const RtpSegment& s) { return s.row >= kHeight / 2; });
  ASSERT_GT(beyond, 0u);
  EXPECT_EQ(got.stats.malformed, beyond) << got.stats.last_malformed;
  EXPECT_EQ(got.stats.malformed + got.stats.placed, got.packets);
  EXPECT_EQ(got.stats.frames_complete, 0u) << "a field-rows receiver cannot complete GStreamer's frames";
}

}  // namespace
