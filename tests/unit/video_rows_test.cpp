// video.rows (issue 33): what an interlaced stream's SRD row numbers count. SMPTE ST 2110-20
// numbers rows within the field (the default); GStreamer 1.22's rtpvrawpay writes the frame's
// lines (0, 2, 4 ... with F = 0; 1, 3, 5 ... with F = 1), which rows: frame reads. Here: the
// YAML key and its errors (key, file, line, what is allowed), and netdaq's sender writing each
// numbering, read back by the decoder into the frame the sender took its bytes from.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "config_test_util.h"
#include "netdaq/config.h"
#include "netdaq/status.h"
#include "protocols/rtp_video.h"
#include "sensors/video_sender.h"

namespace netdaq {
namespace {

using Bytes = std::vector<std::byte>;

std::string yaml(const std::string& keys) {
  return test::reorder_yaml("          mode: rtp_video\n          frames: host\n          video:\n            width: 720\n"
                            "            exactframerate: 30000/1001\n" + keys);
}
const std::string kKey = "interfaces[0].rx.reorder[0].video.";

TEST(st2110_video_rows, DefaultIsFieldAndFrameIsRead) {
  test::ensure_socket_engine();
  const Config a = Config::parse(yaml("            height: 486\n            interlaced: true"));
  EXPECT_EQ(a.interfaces[0].rx.reorder[0].video.rows, VideoRows::field);
  const Config b = Config::parse(yaml("            height: 486\n            interlaced: true\n            rows: frame"));
  EXPECT_EQ(b.interfaces[0].rx.reorder[0].video.rows, VideoRows::frame);
  const Config c = Config::parse(yaml("            height: 486\n            interlaced: true\n            rows: field"));
  EXPECT_EQ(c.interfaces[0].rx.reorder[0].video.rows, VideoRows::field);
  EXPECT_STREQ(to_string(VideoRows::frame), "frame");
}

TEST(st2110_video_rows, ErrorsNameKeyFileLineAndWhatIsAllowed) {
  test::ensure_socket_engine();
  // The key's own line and column in the document.
  auto issues = test::parse_issues(yaml("            height: 486\n            interlaced: true\n            rows: lines"));
  test::expect_issue(issues, "test.yaml", 18, 13, kKey + "rows", "lines", "must be one of: field, frame");
  // rows: frame in progressive video: not read, refused.
  issues = test::parse_issues(yaml("            height: 486\n            rows: frame"));
  test::expect_issue(issues, "test.yaml", 17, 13, kKey + "rows", "frame", "is read only when interlaced: true");
  // rows: frame numbers the frame's lines in 15 bits: at most 32768 of them.
  issues = test::parse_issues(yaml("            height: 32770\n            interlaced: true\n            rows: frame"));
  test::expect_issue(issues, "test.yaml", 16, 13, kKey + "height", "32770", "2..32768");
  EXPECT_NO_THROW(Config::parse(yaml("            height: 32770\n            interlaced: true")));  // rows: field
}

// Sends one frame with netdaq's sender and places each packet's spans with the decoder.
Bytes sent_and_decoded(const VideoOptions& v, const std::vector<std::byte>& frame, std::vector<uint32_t>* rows_seen) {
  sensors::VideoSenderConfig c;
  c.video = v;
  c.payload_size = 600;
  sensors::VideoSender s(c);
  s.set_frames(frame);
  protocols::RtpVideoDecoder d(v, 1);
  Bytes out(frame.size(), std::byte{0});
  std::vector<std::byte> pkt(s.max_packet_bytes());
  for (uint32_t i = 0; i < s.packets_per_frame(); ++i) {
    const uint32_t len = s.next_packet(pkt);
    EXPECT_GT(len, 0u);
    // The SRD rows as written (RFC 4175: after 12 + 2 bytes, 6 bytes each until C = 0).
    for (uint32_t at = 14;; at += 6) {
      rows_seen->push_back((std::to_integer<uint32_t>(pkt[at + 2]) & 0x7f) << 8 | std::to_integer<uint32_t>(pkt[at + 3]));
      rows_seen->push_back(std::to_integer<uint32_t>(pkt[at + 2]) >> 7);  // F
      if (!(std::to_integer<uint32_t>(pkt[at + 4]) & 0x80)) break;
    }
    protocols::Decoded o;
    d.decode_packet(protocols::PacketBytes{{}, std::span<const std::byte>(pkt.data(), len), {}, len}, o);
    EXPECT_EQ(o.verdict, protocols::Verdict::data) << o.reason;
    for (unsigned k = 0; k < o.nspans; ++k)
      std::memcpy(out.data() + o.spans[k].offset, pkt.data() + o.spans[k].packet_offset, o.spans[k].bytes);
  }
  return out;
}

TEST(st2110_video_rows, SenderWritesEitherNumberingAndTheDecoderRebuildsTheFrame) {
  VideoOptions v{.width = 64, .height = 20, .sampling = VideoSampling::ycbcr_422, .depth = 10, .interlaced = true,
                 .rate_num = 30000, .rate_den = 1001};
  std::vector<std::byte> frame(64 / 2 * 5 * 20);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = std::byte((i * 7 + i / 160) & 0xff);
  for (const VideoRows rows : {VideoRows::field, VideoRows::frame}) {
    SCOPED_TRACE(to_string(rows));
    v.rows = rows;
    std::vector<uint32_t> seen;  // row, F pairs
    EXPECT_EQ(sent_and_decoded(v, frame, &seen), Bytes(frame.begin(), frame.end()));
    uint32_t max_row = 0;
    for (size_t i = 0; i < seen.size(); i += 2) {
      max_row = std::max(max_row, seen[i]);
      if (rows == VideoRows::frame) {
        EXPECT_EQ(seen[i] % 2, seen[i + 1]) << "frame rows carry their field's parity";
      }
    }
    EXPECT_EQ(max_row, rows == VideoRows::frame ? 19u : 9u);
    // The other numbering's receiver refuses or misplaces: the setting matters.
    VideoOptions other = v;
    other.rows = rows == VideoRows::frame ? VideoRows::field : VideoRows::frame;
    protocols::RtpVideoDecoder d(other, 1);
    sensors::VideoSenderConfig c;
    c.video = v;
    c.payload_size = 600;
    sensors::VideoSender s(c);
    s.set_frames(frame);
    std::vector<std::byte> pkt(s.max_packet_bytes());
    uint64_t refused = 0;
    for (uint32_t i = 0; i < s.packets_per_frame(); ++i) {
      const uint32_t len = s.next_packet(pkt);
      protocols::Decoded o;
      d.decode_packet(protocols::PacketBytes{{}, std::span<const std::byte>(pkt.data(), len), {}, len}, o);
      refused += o.verdict == protocols::Verdict::malformed;
    }
    EXPECT_GT(refused, 0u);
  }
  // The sender refuses rows: frame beyond 15-bit frame lines.
  sensors::VideoSenderConfig big;
  big.video = v;
  big.video.width = 64;
  big.video.height = 32770;
  big.video.rows = VideoRows::frame;
  EXPECT_THROW(sensors::VideoSender{big}, Error);
  big.video.rows = VideoRows::field;
  EXPECT_NO_THROW(sensors::VideoSender{big});
}

}  // namespace
}  // namespace netdaq
