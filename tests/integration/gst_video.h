// GStreamer as the independent RFC 4175 / ST 2110-20 sender of the st2110 tests. One
// gst-launch-1.0 child process (videotestsrc -> rtpvrawpay -> udpsink) also writes, through
// tees, the raw frames it payloaded (filesink) and every RTP packet it sent (rtpstreampay:
// RFC 4571's 2-byte length framing), so that a test knows exactly what went on the wire and
// what each frame must be:
//
//   GstVideoSend o;  o.format = gst_uyvp(); o.width = 640; ...; o.host = "127.0.0.1"; o.port = p;
//   GstVideoSender gst(o);                      // starts it (in o.ns when set)
//   ... receive while gst.running() ...
//   ASSERT_EQ(gst.finish(), 0) << gst.describe();
//   auto raw = gst.raw_frames();                // frame k: line bytes only (stride padding stripped)
//   auto sent = gst.packets();                  // parsed by this file, not by netdaq
//
// The RTP parse and the reference frames here are written from RFC 3550 / RFC 4175 alone
// (not from src/protocols/), so that they check the decoder instead of repeating it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peers.h"
#include "test_util.h"

namespace ndqtest {

// A GStreamer raw video format and its RFC 4175 sampling, depth and pixel group.
struct GstVideoFormat {
  std::string gst;          // video/x-raw format: UYVP, UYVY, RGB
  std::string sampling;     // SDP sampling: YCbCr-4:2:2, RGB
  uint32_t depth = 0;       // bits per component
  uint32_t pgroup_bytes = 0, pgroup_pixels = 0;
  uint64_t line_bytes(uint32_t width) const { return uint64_t{width} / pgroup_pixels * pgroup_bytes; }
  // GStreamer's row stride for this width (gst-plugins-base video-info.c: rows rounded up to
  // 4 bytes); differs from line_bytes where the line is not a multiple of 4 bytes.
  uint64_t gst_stride(uint32_t width) const;
};
GstVideoFormat gst_uyvp();  // 10-bit 4:2:2, pgroup 5 bytes / 2 pixels
GstVideoFormat gst_uyvy();  // 8-bit 4:2:2, pgroup 4 bytes / 2 pixels
GstVideoFormat gst_rgb();   // 8-bit RGB, pgroup 3 bytes / 1 pixel

struct GstVideoSend {
  std::string ns;  // network namespace to run in ("": this one)
  GstVideoFormat format;
  uint32_t width = 640, height = 480, fps = 30, frames = 8;
  std::string pattern = "ball";  // videotestsrc pattern: a moving ball, every frame different
  uint32_t mtu = 1400;           // rtpvrawpay mtu: RTP packet bytes (UDP payload)
  std::string host;              // udpsink destination
  uint16_t port = 0;
  // Fixed instead of GStreamer's random ones, so that a run is repeatable and a test can
  // put the 16-bit sequence or 32-bit timestamp wrap inside the stream.
  uint32_t seqnum_offset = 1000, timestamp_offset = 123456, ssrc = 0x2110cafe;
  uint32_t payload_type = 96;
  bool interlaced = false;  // caps interlace-mode=interleaved: both fields in a frame, sent field by field
  std::chrono::milliseconds timeout{30000};  // the child is killed after this
};

// One SRD header of a packet and where its bytes lie in the packet.
struct RtpSegment {
  uint32_t length = 0;  // bytes
  bool field = false;
  uint32_t row = 0;
  uint32_t offset = 0;  // pixels
  size_t at = 0;        // first byte of the segment in the packet
};

// An RTP packet of RFC 4175 as sent (RFC 3550 header, extended sequence, SRD headers).
struct RtpVideoPacket {
  Bytes bytes;
  uint16_t seq = 0, ext_seq = 0;
  uint32_t timestamp = 0, ssrc = 0;
  uint8_t payload_type = 0;
  bool marker = false;
  std::vector<RtpSegment> segments;
};
// Throws std::runtime_error when b is no RFC 4175 packet.
RtpVideoPacket parse_rtp_video(const Bytes& b);

class GstVideoSender {
 public:
  explicit GstVideoSender(const GstVideoSend& o);  // starts gst-launch-1.0
  ~GstVideoSender();                               // stops it if still running, removes its files
  GstVideoSender(const GstVideoSender&) = delete;
  GstVideoSender& operator=(const GstVideoSender&) = delete;

  bool running();
  // Waits (up to the options' timeout from the start) for the exit; returns the exit status
  // (128 + signal when it had to be killed).
  int finish();
  std::string describe() const;  // command line and output, for failure messages

  // After finish(): frame k as GStreamer wrote it, each row's stride padding stripped (rows
  // of line_bytes). Throws std::runtime_error when the file is not whole frames.
  std::vector<Bytes> raw_frames() const;
  // After finish(): every packet rtpvrawpay gave udpsink, in order.
  std::vector<RtpVideoPacket> packets() const;

 private:
  GstVideoSend o_;
  TempFile raw_, rtp_;
  std::unique_ptr<PeerProcess> proc_;
  std::chrono::steady_clock::time_point started_;
  int status_ = -1;
};

// What a receiver must make of GStreamer's stream when only some packets arrive: frame k (the
// k-th timestamp GStreamer sent, the k-th raw frame) holds, at line row x line_bytes +
// offset x pgroup_bytes / pgroup_pixels, each arrived segment's bytes (taken from the raw
// frame, after checking that the packet carries exactly those); every other byte is zero.
struct ExpectedFrame {
  uint32_t timestamp = 0;
  Bytes bytes;
  std::vector<bool> line_missing;  // a line not every byte of which arrived
  uint64_t packets = 0, arrived = 0;
  uint64_t bytes_missing = 0;      // bytes no arrived segment covered
  bool complete() const;
};
// arrived[i]: whether sent[i] reached the receiver (empty: all did). Progressive video only.
// Throws std::runtime_error when a packet's bytes differ from the raw frame where its SRD
// says they belong, or segments reach beyond a line (GStreamer's packets are then not what
// this test assumes).
std::vector<ExpectedFrame> expected_frames(const GstVideoFormat& f, uint32_t width, uint32_t height,
                                           const std::vector<RtpVideoPacket>& sent, const std::vector<bool>& arrived,
                                           const std::vector<Bytes>& raw);

// True when the GStreamer elements the st2110 tests use are installed (gst-inspect-1.0).
bool have_gst_elements();

// Fails (CI=true) or skips a test without gst-launch-1.0 and those elements.
#define NDQ_REQUIRE_GST()                                                 \
  do {                                                                    \
    NDQ_REQUIRE_TOOL("gst-launch-1.0", "gstreamer1.0-tools");             \
    NDQ_REQUIRE(::ndqtest::have_gst_elements(),                           \
                "GStreamer elements missing (apt-get install gstreamer1.0-plugins-base gstreamer1.0-plugins-good)"); \
  } while (0)

// The numbers of the lines where a and b differ (at most `max`), for failure messages.
std::string differing_lines(const Bytes& a, const Bytes& b, uint64_t line_bytes, size_t max = 8);

}  // namespace ndqtest
