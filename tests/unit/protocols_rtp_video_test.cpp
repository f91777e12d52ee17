// The RFC 4175 / ST 2110-20 decoder (src/protocols/rtp_video.h): packets built here from the
// RFC's layout (RTP header of RFC 3550 section 5.1; payload header of RFC 4175 section 4.1:
// extended sequence number, SRD headers length | F row | C offset, then the segments), not by
// the library's sender, so the two are checked against the RFC independently. Spans, frame
// numbers from timestamps (wrap, 59.94's 1501.5 ticks, late packets, two SSRCs, restarts),
// every malformed reason, and whole frames through HostFrameAssembler with a lost packet
// showing as exactly its lines missing (include/netdaq/video.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <cstring>
#include <string>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/host_frames.h"
#include "netdaq/video.h"
#include "protocols/rtp_video.h"

namespace netdaq {
namespace {

using protocols::Decoded;
using protocols::PacketBytes;
using protocols::RtpVideoDecoder;
using protocols::Verdict;
using Bytes = std::vector<std::byte>;

// ---- A packet builder written from the RFCs ----

struct Rtp {
  uint8_t version = 2;
  bool marker = false;
  uint8_t pt = 96;
  uint16_t seq = 0;
  uint32_t ts = 0;
  uint32_t ssrc = 0x5eed0001;
  uint8_t csrcs = 0;           // CC: this many 4-byte CSRCs follow the fixed header
  int ext_words = -1;          // >= 0: X set, a header extension of this many 32-bit words
  uint8_t padding = 0;         // P set, this many bytes at the end (the last holds the count)
  uint16_t ext_seq = 0;        // RFC 4175 extended sequence number (high 16 bits)
};

struct Seg {
  uint16_t row = 0;
  uint16_t offset = 0;  // pixels
  uint16_t length = 0;  // bytes
  bool field = false;
};

void put16(Bytes& b, uint32_t v) {
  b.push_back(std::byte(v >> 8));
  b.push_back(std::byte(v & 0xff));
}
void put32(Bytes& b, uint32_t v) {
  put16(b, v >> 16);
  put16(b, v & 0xffff);
}

// The segment's bytes: byte i of segment k is 0x40 + k + i (mod 256) unless a source frame is
// given, then the frame's bytes at `at[k]`.
Bytes packet(const Rtp& h, const std::vector<Seg>& segs, const Bytes* frame = nullptr,
             const std::vector<uint64_t>& at = {}) {
  Bytes b;
  b.push_back(std::byte(h.version << 6 | (h.padding ? 0x20 : 0) | (h.ext_words >= 0 ? 0x10 : 0) | h.csrcs));
  b.push_back(std::byte((h.marker ? 0x80 : 0) | h.pt));
  put16(b, h.seq);
  put32(b, h.ts);
  put32(b, h.ssrc);
  for (uint8_t i = 0; i < h.csrcs; ++i) put32(b, 0xc0000000u + i);
  if (h.ext_words >= 0) {
    put16(b, 0xbede);
    put16(b, static_cast<uint32_t>(h.ext_words));
    for (int i = 0; i < h.ext_words; ++i) put32(b, 0xe0e0e0e0u);
  }
  put16(b, h.ext_seq);
  for (size_t k = 0; k < segs.size(); ++k) {
    const Seg& s = segs[k];
    put16(b, s.length);
    put16(b, (s.field ? 0x8000u : 0) | (s.row & 0x7fff));
    put16(b, (k + 1 < segs.size() ? 0x8000u : 0) | (s.offset & 0x7fff));
  }
  for (size_t k = 0; k < segs.size(); ++k)
    for (uint32_t i = 0; i < segs[k].length; ++i)
      b.push_back(frame ? (*frame)[at[k] + i] : std::byte((0x40 + k + i) & 0xff));
  for (uint8_t i = 0; i < h.padding; ++i) b.push_back(std::byte(i + 1 == h.padding ? h.padding : 0));
  return b;
}

// Header bytes before the first segment: RTP 12 + CSRCs + extension + 2 + 6 per SRD.
uint32_t header_bytes(const Rtp& h, size_t segs) {
  return 12 + 4u * h.csrcs + (h.ext_words >= 0 ? 4 + 4u * h.ext_words : 0) + 2 + 6 * static_cast<uint32_t>(segs);
}

VideoOptions video(uint32_t width, uint32_t height, VideoSampling s, uint8_t depth, bool interlaced = false,
                   uint32_t num = 60, uint32_t den = 1) {
  return VideoOptions{.width = width, .height = height, .sampling = s, .depth = depth, .interlaced = interlaced,
                      .rate_num = num, .rate_den = den};
}

Decoded decode(RtpVideoDecoder& d, const Bytes& b) {
  Decoded out;
  d.decode_packet(PacketBytes{{}, std::span<const std::byte>(b), {}, static_cast<uint32_t>(b.size())}, out);
  return out;
}

// ---- Spans ----

TEST(st2110_rtp_video, OneSegmentOf10Bit422LandsAtItsLineAndPixel) {
  const VideoOptions v = video(1920, 1080, VideoSampling::ycbcr_422, 10);  // 4800 bytes a line
  RtpVideoDecoder d(v, 1);
  const Rtp h{.marker = true, .ts = 90000, .ssrc = 0xabcdef01};
  const Seg s{.row = 7, .offset = 480, .length = 1200};  // pixels 480..959: pgroups 240..479
  const Decoded out = decode(d, packet(h, {s}));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 1);
  EXPECT_EQ(out.spans[0].offset, 7u * 4800 + 240 * 5);
  EXPECT_EQ(out.spans[0].packet_offset, header_bytes(h, 1));
  EXPECT_EQ(out.spans[0].bytes, 1200u);
  EXPECT_EQ(out.spans[0].frame, 60u);  // 90000 / 1500 ticks: frame 60 of the timestamp
  EXPECT_TRUE(out.has_stream);
  EXPECT_EQ(out.stream, 0xabcdef01u);
  EXPECT_TRUE(out.marker);
  EXPECT_TRUE(out.has_timestamp);
  EXPECT_EQ(out.timestamp, 90000u);
  EXPECT_EQ(out.frame_bytes, 4800u * 1080);
}

TEST(st2110_rtp_video, ThreeSegmentsEightBit422AndRgb) {
  // 8-bit 4:2:2: pgroup 4 bytes / 2 pixels; line 64 px = 128 bytes.
  RtpVideoDecoder d8(video(64, 16, VideoSampling::ycbcr_422, 8), 1);
  const Rtp h{};
  const std::vector<Seg> segs{{.row = 2, .offset = 32, .length = 64},   // second half of line 2
                              {.row = 4, .offset = 0, .length = 40},    // start of line 4
                              {.row = 9, .offset = 10, .length = 8}};   // pixels 10..13 of line 9
  Decoded out = decode(d8, packet(h, segs));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 3);
  const uint32_t data = header_bytes(h, 3);
  EXPECT_EQ(out.spans[0].offset, 2u * 128 + 64);
  EXPECT_EQ(out.spans[0].packet_offset, data);
  EXPECT_EQ(out.spans[1].offset, 4u * 128);
  EXPECT_EQ(out.spans[1].packet_offset, data + 64);
  EXPECT_EQ(out.spans[2].offset, 9u * 128 + 20);
  EXPECT_EQ(out.spans[2].packet_offset, data + 104);
  EXPECT_EQ(out.spans[2].bytes, 8u);
  EXPECT_FALSE(out.marker);

  // RGB 8-bit: pgroup 3 bytes / 1 pixel; line 100 px = 300 bytes; two segments.
  RtpVideoDecoder rgb(video(100, 10, VideoSampling::rgb, 8), 1);
  out = decode(rgb, packet(h, {{.row = 1, .offset = 99, .length = 3}, {.row = 3, .offset = 5, .length = 30}}));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 2);
  EXPECT_EQ(out.spans[0].offset, 300u + 297);
  EXPECT_EQ(out.spans[1].offset, 900u + 15);
  EXPECT_EQ(out.spans[1].bytes, 30u);
}

TEST(st2110_rtp_video, SegmentsThatContinueInTheFrameJoinOneSpan) {
  // Whole lines one after another (as GStreamer packs short lines) are one span, so a packet
  // of five SRDs is fine when they touch; five separate segments are malformed.
  RtpVideoDecoder d(video(32, 64, VideoSampling::ycbcr_422, 8), 1);  // 64 bytes a line
  std::vector<Seg> lines;
  for (uint16_t r = 10; r < 15; ++r) lines.push_back({.row = r, .offset = 0, .length = 64});
  Decoded out = decode(d, packet({}, lines));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 1);
  EXPECT_EQ(out.spans[0].offset, 640u);
  EXPECT_EQ(out.spans[0].bytes, 320u);
  EXPECT_EQ(d.counters().merged, 4u);

  std::vector<Seg> apart;
  for (uint16_t r = 0; r < 5; ++r) apart.push_back({.row = static_cast<uint16_t>(2 * r), .offset = 0, .length = 8});
  out = decode(d, packet({}, apart));
  EXPECT_EQ(out.verdict, Verdict::malformed);
  EXPECT_STREQ(out.reason, "RFC 4175: more than 4 separate line segments in one packet");
  apart.pop_back();  // four are fine
  out = decode(d, packet({}, apart));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.nspans, 4);
}

TEST(st2110_rtp_video, CsrcsExtensionAndPaddingAreSkipped) {
  RtpVideoDecoder d(video(64, 16, VideoSampling::ycbcr_422, 10), 1);  // 160 bytes a line
  const Rtp h{.csrcs = 3, .ext_words = 2, .padding = 4};
  const Bytes b = packet(h, {{.row = 1, .offset = 0, .length = 100}});
  const Decoded out = decode(d, b);
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 1);
  EXPECT_EQ(out.spans[0].packet_offset, 12u + 12 + 12 + 2 + 6);
  EXPECT_EQ(out.spans[0].offset, 160u);
  EXPECT_EQ(std::to_integer<int>(b[out.spans[0].packet_offset]), 0x40);  // the segment's first byte
}

TEST(st2110_rtp_video, InterlacedFieldsInterleaveAndTheSecondFieldsMarkerEndsTheFrame) {
  // 1080i: 540 rows per field; field 0 on even frame lines, field 1 on odd ones.
  const VideoOptions v = video(1920, 1080, VideoSampling::ycbcr_422, 10, true, 30000, 1001);
  RtpVideoDecoder d(v, 1);
  const uint32_t ts = 3003 * 1000;  // frame 1000's first field
  Decoded out = decode(d, packet({.marker = true, .ts = ts}, {{.row = 539, .offset = 0, .length = 4800}}));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.spans[0].offset, 1078u * 4800);
  EXPECT_EQ(out.spans[0].frame, 1000u);
  EXPECT_FALSE(out.marker);  // the first field's marker ends a field, not the frame
  // Field 1, stamped half a frame later (RFC 4175: each field at its own sampling instant).
  out = decode(d, packet({.marker = true, .ts = ts + 1502},
                         {{.row = 539, .offset = 0, .length = 4800, .field = true}}));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.spans[0].offset, 1079u * 4800);
  EXPECT_EQ(out.spans[0].frame, 1000u);
  EXPECT_TRUE(out.marker);
  // The next frame's field 0, then a late field-1 packet of frame 1000.
  out = decode(d, packet({.ts = ts + 3003}, {{.row = 0, .offset = 0, .length = 4800}}));
  EXPECT_EQ(out.spans[0].frame, 1001u);
  out = decode(d, packet({.ts = ts + 1502}, {{.row = 3, .offset = 0, .length = 5, .field = true}}));
  EXPECT_EQ(out.spans[0].frame, 1000u);
  EXPECT_EQ(out.spans[0].offset, 7u * 4800);
  // Rows count per field.
  out = decode(d, packet({.ts = ts + 3003}, {{.row = 540, .offset = 0, .length = 5}}));
  EXPECT_EQ(out.verdict, Verdict::malformed);
  EXPECT_STREQ(out.reason, "RFC 4175: SRD row beyond video.height (lines of a field when interlaced, rows: field)");
}

TEST(st2110_rtp_video, InterlacedRowsDefaultToFieldLinesAsSt2110Says) {
  // ST 2110-20 numbers an interlaced field's rows within the field: the default.
  EXPECT_EQ(VideoOptions{}.rows, VideoRows::field);
  const VideoOptions v = video(1920, 1080, VideoSampling::ycbcr_422, 10, true, 30000, 1001);
  RtpVideoDecoder d(v, 1);
  // GStreamer's frame-numbered row 1078 of field 0 is beyond a field's 540 rows.
  const Decoded out = decode(d, packet({.ts = 3003}, {{.row = 1078, .offset = 0, .length = 4800}}));
  EXPECT_EQ(out.verdict, Verdict::malformed);
  EXPECT_STREQ(out.reason, "RFC 4175: SRD row beyond video.height (lines of a field when interlaced, rows: field)");
  EXPECT_EQ(d.counters().malformed, 1u);
}

TEST(st2110_rtp_video, InterlacedFrameRowsAreTheFramesLinesWithTheirFieldsParity) {
  // video.rows: frame (GStreamer 1.22's rtpvrawpay): field 0 writes rows 0, 2, 4 ..., field 1
  // rows 1, 3, 5 ...; the row is the frame line itself.
  VideoOptions v = video(1920, 1080, VideoSampling::ycbcr_422, 10, true, 30000, 1001);
  v.rows = VideoRows::frame;
  RtpVideoDecoder d(v, 1);
  const uint32_t ts = 3003 * 7;
  Decoded out = decode(d, packet({.ts = ts}, {{.row = 0, .offset = 0, .length = 4800}, {.row = 1078, .offset = 4, .length = 10}}));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 2u);
  EXPECT_EQ(out.spans[0].offset, 0u);
  EXPECT_EQ(out.spans[1].offset, 1078u * 4800 + 10);
  EXPECT_EQ(out.spans[0].frame, 7u);
  out = decode(d, packet({.marker = true, .ts = ts + 1502}, {{.row = 1079, .offset = 0, .length = 4800, .field = true}}));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.spans[0].offset, 1079u * 4800);
  EXPECT_EQ(out.spans[0].frame, 7u);
  EXPECT_TRUE(out.marker);
  // A row whose parity is not its field's is malformed, either way round, even as the
  // second SRD of a packet whose first is fine.
  const char* parity =
      "RFC 4175: SRD row's parity is not its field's (video.rows: frame: field 0 on even lines, field 1 on odd)";
  for (const std::vector<Seg>& segs : std::vector<std::vector<Seg>>{
           {{.row = 1, .offset = 0, .length = 5}},
           {{.row = 0, .offset = 0, .length = 5, .field = true}},
           {{.row = 2, .offset = 0, .length = 5}, {.row = 3, .offset = 0, .length = 5}}}) {
    out = decode(d, packet({.ts = ts}, segs));
    EXPECT_EQ(out.verdict, Verdict::malformed);
    EXPECT_STREQ(out.reason, parity);
    EXPECT_EQ(out.nspans, 0u);
  }
  // Rows count the frame's lines: 1079 is the last, 1080 beyond.
  out = decode(d, packet({.ts = ts}, {{.row = 1080, .offset = 0, .length = 5}}));
  EXPECT_EQ(out.verdict, Verdict::malformed);
  EXPECT_STREQ(out.reason, "RFC 4175: SRD row beyond video.height (lines of a field when interlaced, rows: field)");
  EXPECT_EQ(d.counters().malformed, 4u);
  // Progressive video ignores rows (validation refuses rows: frame there): rows are lines.
  VideoOptions p = video(64, 8, VideoSampling::ycbcr_422, 8);
  EXPECT_EQ(protocols::video::frame_line(p, 5, false), 5u);
  EXPECT_EQ(protocols::video::srd_rows(p), 8u);
  EXPECT_EQ(protocols::video::srd_rows(v), 1080u);
  v.rows = VideoRows::field;
  EXPECT_EQ(protocols::video::srd_rows(v), 540u);
}

TEST(st2110_rtp_video, SrdRowIsFrameLinesInverse) {
  // What the sender writes (srd_row) lands where it took the bytes from (frame_line).
  for (const VideoRows rows : {VideoRows::field, VideoRows::frame}) {
    VideoOptions v = video(64, 20, VideoSampling::ycbcr_422, 8, true);
    v.rows = rows;
    for (uint32_t r = 0; r < 10; ++r)
      for (const bool f : {false, true}) {
        const uint32_t wire = protocols::video::srd_row(v, r, f);
        EXPECT_EQ(wire, rows == VideoRows::frame ? 2 * r + f : r);
        EXPECT_EQ(protocols::video::frame_line(v, wire, f), 2 * r + f);
      }
  }
}

TEST(st2110_rtp_video, InterlacedSenderStampingBothFieldsAlikeNumbersTheSame) {
  const VideoOptions v = video(64, 8, VideoSampling::ycbcr_422, 8, true, 25, 1);  // 3600 ticks a frame
  RtpVideoDecoder d(v, 1);
  // Starting on a field-1 packet: frame 10's field 1, then its field 0, then frame 11.
  for (const auto& [ts, field, frame] : std::vector<std::tuple<uint32_t, bool, uint64_t>>{
           {36000, true, 10}, {36000, false, 10}, {39600, false, 11}, {39600, true, 11}, {43200, true, 12}}) {
    const Decoded out = decode(d, packet({.ts = ts}, {{.row = 1, .offset = 0, .length = 4, .field = field}}));
    ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
    EXPECT_EQ(out.spans[0].frame, frame) << ts << " field " << field;
  }
}

// ---- Frame numbers ----

TEST(st2110_rtp_video, TimestampWrapAndLatePacketsLandOnTheirFrame) {
  RtpVideoDecoder d(video(64, 8, VideoSampling::ycbcr_422, 8), 1);  // 60 fps: 1500 ticks
  const Seg s{.row = 0, .offset = 0, .length = 4};
  const uint32_t start = 0xFFFFFFFFu - 2999;  // 3000 ticks before the wrap
  const uint64_t first = std::llround(double(start) / 1500);
  uint64_t frames[6];
  const uint32_t stamps[6] = {start, start + 1500, start + 3000 /* wraps to 0 */, start + 4500, start + 1500,
                              start + 6000};
  for (int i = 0; i < 6; ++i) {
    const Decoded out = decode(d, packet({.ts = stamps[i]}, {s}));
    ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
    frames[i] = out.spans[0].frame;
  }
  EXPECT_EQ(frames[0], first);
  EXPECT_EQ(frames[1], first + 1);
  EXPECT_EQ(frames[2], first + 2);  // across the wrap
  EXPECT_EQ(frames[3], first + 3);
  EXPECT_EQ(frames[4], first + 1);  // a late packet of an older frame
  EXPECT_EQ(frames[5], first + 4);
}

TEST(st2110_rtp_video, Rate5994Rounds1501AndAHalfTicks) {
  RtpVideoDecoder d(video(64, 8, VideoSampling::ycbcr_422, 8, false, 60000, 1001), 1);
  const uint32_t base = 123456789;
  const uint64_t first = std::llround(base / 1501.5);
  for (uint32_t k = 0; k < 3000; ++k) {  // a sender's timestamps: base + floor(k x 1501.5)
    const uint32_t ts = base + static_cast<uint32_t>(std::floor(k * 1501.5));
    const Decoded out = decode(d, packet({.ts = ts}, {{.row = 0, .offset = 0, .length = 4}}));
    ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
    ASSERT_EQ(out.spans[0].frame, first + k) << k;
  }
  // Frames lost in between: 7 frames later is 10510.5 ticks.
  const uint32_t ts = base + static_cast<uint32_t>(std::floor(3006 * 1501.5));
  EXPECT_EQ(decode(d, packet({.ts = ts}, {{.row = 0, .offset = 0, .length = 4}})).spans[0].frame, first + 3006);
}

TEST(st2110_rtp_video, TwoSsrcsNumberTheirFramesApartAndAThirdIsLeftToTheTracker) {
  RtpVideoDecoder d(video(64, 8, VideoSampling::ycbcr_422, 8), 2);
  const Seg s{.row = 0, .offset = 0, .length = 4};
  Decoded a = decode(d, packet({.ts = 15000, .ssrc = 1}, {s}));
  Decoded b = decode(d, packet({.ts = 3000000, .ssrc = 2}, {s}));
  EXPECT_EQ(a.stream, 1u);
  EXPECT_EQ(a.spans[0].frame, 10u);
  EXPECT_EQ(b.stream, 2u);
  EXPECT_EQ(b.spans[0].frame, 2000u);
  a = decode(d, packet({.ts = 16500, .ssrc = 1}, {s}));
  b = decode(d, packet({.ts = 3000000 - 1500, .ssrc = 2}, {s}));
  EXPECT_EQ(a.spans[0].frame, 11u);
  EXPECT_EQ(b.spans[0].frame, 1999u);
  const Decoded c = decode(d, packet({.ts = 7, .ssrc = 3}, {s}));  // beyond max_streams
  ASSERT_EQ(c.verdict, Verdict::data);
  EXPECT_EQ(c.stream, 3u);  // the tracker, keeping as many streams, counts it no_stream
}

TEST(st2110_rtp_video, FarBehindIsRefusedAndARestartedSenderIsFollowed) {
  RtpVideoDecoder d(video(64, 8, VideoSampling::ycbcr_422, 8), 1);
  const Seg s{.row = 0, .offset = 0, .length = 4};
  ASSERT_EQ(decode(d, packet({.ts = 1500 * 1000}, {s})).spans[0].frame, 1000u);
  EXPECT_EQ(decode(d, packet({.ts = 1500 * 936}, {s})).spans[0].frame, 936u);  // 64 behind: late, placed
  for (uint32_t i = 1; i < RtpVideoDecoder::kResyncAfter; ++i) {
    const Decoded out = decode(d, packet({.ts = 1500 * 10 + i}, {s}));
    EXPECT_EQ(out.verdict, Verdict::malformed);
    EXPECT_STREQ(out.reason, "RTP: timestamp more than 64 frames behind the stream's newest");
  }
  const Decoded out = decode(d, packet({.ts = 1500 * 10}, {s}));  // the 16th in a row: followed
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.spans[0].frame, 1001u);
  EXPECT_EQ(decode(d, packet({.ts = 1500 * 11}, {s})).spans[0].frame, 1002u);
  EXPECT_EQ(d.counters().far_behind, RtpVideoDecoder::kResyncAfter - 1);
  EXPECT_EQ(d.counters().resyncs, 1u);
}

// ---- Malformed ----

TEST(st2110_rtp_video, MalformedPacketsSayWhy) {
  VideoOptions v = video(64, 16, VideoSampling::ycbcr_422, 10);  // pgroup 5 bytes / 2 pixels
  v.payload_type = 96;
  RtpVideoDecoder d(v, 1);
  const Seg ok{.row = 0, .offset = 0, .length = 10};
  const auto why = [&](const Bytes& b) {
    const Decoded out = decode(d, b);
    return out.verdict == Verdict::malformed ? std::string(out.reason) : std::string("(placed)");
  };
  EXPECT_EQ(why(packet({}, {ok})), "(placed)");
  EXPECT_EQ(why(Bytes(11)), "RTP: shorter than the 12-byte RTP header");
  EXPECT_EQ(why(packet({.version = 1}, {ok})), "RTP: version is not 2");
  EXPECT_EQ(why(packet({.pt = 97}, {ok})), "RTP: payload type is not video.payload_type");
  Bytes b = packet({}, {});
  EXPECT_EQ(why(b), "RFC 4175: no extended sequence number and SRD header");
  b = packet({}, {ok});
  b.resize(12 + 2 + 4);  // half an SRD header
  EXPECT_EQ(why(b), "RFC 4175: no extended sequence number and SRD header");
  b = packet({}, {ok});
  b[12 + 2 + 4] |= std::byte{0x80};  // C set on the only header: the next one is the data
  b.resize(12 + 2 + 6 + 4);
  EXPECT_EQ(why(b), "RFC 4175: SRD headers run past the payload (no header with C = 0)");
  b = packet({.csrcs = 15}, {});
  b.resize(40);
  EXPECT_EQ(why(b), "RTP: CSRC list beyond the packet");
  b = packet({.ext_words = 100}, {ok});
  b.resize(200);
  EXPECT_EQ(why(b), "RTP: header extension beyond the packet");
  b = packet({.padding = 4}, {ok});
  b.back() = std::byte{0};
  EXPECT_EQ(why(b), "RTP: padding count 0 or beyond the payload");
  b.back() = std::byte{200};
  EXPECT_EQ(why(b), "RTP: padding count 0 or beyond the payload");
  EXPECT_EQ(why(packet({}, {{.row = 0, .offset = 0, .length = 0}})), "RFC 4175: an SRD of 0 bytes");
  EXPECT_EQ(why(packet({}, {{.row = 0, .offset = 0, .length = 12}})),
            "RFC 4175: SRD length is not a whole number of pixel groups");
  EXPECT_EQ(why(packet({}, {{.row = 0, .offset = 3, .length = 10}})), "RFC 4175: SRD offset is not on a pixel group");
  EXPECT_EQ(why(packet({}, {{.row = 0, .offset = 60, .length = 15}})), "RFC 4175: SRD offset + pixels beyond video.width");
  EXPECT_EQ(why(packet({}, {{.row = 16, .offset = 0, .length = 10}})),
            "RFC 4175: SRD row beyond video.height (lines of a field when interlaced, rows: field)");
  EXPECT_EQ(why(packet({}, {{.row = 0, .offset = 0, .length = 10, .field = true}})),
            "RFC 4175: SRD field bit set in progressive video (video.interlaced: false)");
  b = packet({}, {ok, {.row = 1, .offset = 0, .length = 10}});
  b.resize(b.size() - 1);
  EXPECT_EQ(why(b), "RFC 4175: SRD segments beyond the packet's payload");
  b = packet({.padding = 8}, {ok});  // the padding may not hold segment bytes
  b.back() = std::byte{12};
  EXPECT_EQ(why(b), "RFC 4175: SRD segments beyond the packet's payload");
  // Headers must lie in the first segment (the bytes after may be in a second buffer).
  b = packet({}, {ok, {.row = 1, .offset = 0, .length = 10}});
  Decoded out;
  d.decode_packet(PacketBytes{{}, std::span<const std::byte>(b).first(20), std::span<const std::byte>(b).subspan(20),
                              static_cast<uint32_t>(b.size())},
                  out);
  EXPECT_STREQ(out.reason, "RTP: headers beyond the first segment");
  d.decode_packet(PacketBytes{{}, std::span<const std::byte>(b).first(26), std::span<const std::byte>(b).subspan(26),
                              static_cast<uint32_t>(b.size())},
                  out);
  EXPECT_EQ(out.verdict, Verdict::data) << out.reason;  // segments may continue in the second buffer
  d.decode(b, static_cast<uint32_t>(b.size()), out);
  EXPECT_STREQ(out.reason, "RTP video: decoded without decode_packet() (frames are numbered per SSRC)");
  EXPECT_EQ(d.counters().packets, 21u);  // decode() counts nothing
  EXPECT_EQ(d.counters().malformed, 19u);
}

// ---- Whole frames through HostFrameAssembler (frames: host) ----

class Bursts final : public detail::BurstOwner {
 public:
  // A burst of pkts[from, from + n) (segment 0: the UDP payload, as the socket engine gives
  // it); the packets stay in pkts.
  RxBurst make(const std::vector<Bytes>& pkts, size_t from, size_t n) {
    auto* d = new detail::BurstDesc;
    d->pkts = new Packet[n];
    d->count = d->capacity = static_cast<uint32_t>(n);
    d->owner = this;
    for (size_t k = 0; k < n; ++k) {
      auto& f = detail::fields(d->pkts[k]);
      f.nseg = 1;
      f.data[0] = const_cast<std::byte*>(pkts[from + k].data());
      f.len[0] = f.cap[0] = static_cast<uint32_t>(pkts[from + k].size());
    }
    return RxBurst(d);
  }
  void release(detail::BurstDesc* d) noexcept override {
    delete[] d->pkts;
    delete d;
  }
};

struct Placed {
  uint32_t line;
  uint64_t at, bytes;
};

// A sender of the reference frames: each line in `per_line` segments of whole pgroups, at most
// three SRDs in a packet, the marker on the last (the second field's when interlaced).
struct Sender {
  VideoOptions v;
  uint32_t ssrc = 0x77;
  uint32_t per_line = 3;
  uint32_t max_srds = 3;
  uint16_t seq = 0;

  // lines_of: per packet, its segments' frame lines and byte ranges (at, bytes).
  std::vector<Bytes> frame_packets(const Bytes& frame, uint32_t ts, std::vector<std::vector<Placed>>* lines_of) {
    const uint64_t lb = video_line_bytes(v);
    const uint32_t pg_bytes = v.depth == 10 ? 5 : 4, pg_pixels = 2;  // 4:2:2
    const uint32_t pgs = v.width / pg_pixels;
    struct Piece {
      Seg s;
      uint64_t at;
      uint32_t line;
    };
    std::vector<Piece> pieces;
    const uint32_t fields = v.interlaced ? 2 : 1, rows = v.height / fields;
    for (uint32_t f = 0; f < fields; ++f)
      for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t k = 0; k < per_line; ++k) {
          const uint32_t from = pgs * k / per_line, to = pgs * (k + 1) / per_line;
          const uint32_t line = v.interlaced ? 2 * r + f : r;
          // rows: frame (GStreamer's numbering) writes the frame line, rows: field the field's row.
          const uint32_t row = v.interlaced && v.rows == VideoRows::frame ? line : r;
          pieces.push_back({Seg{.row = static_cast<uint16_t>(row), .offset = static_cast<uint16_t>(from * pg_pixels),
                                .length = static_cast<uint16_t>((to - from) * pg_bytes), .field = f == 1},
                            line * lb + uint64_t{from} * pg_bytes, line});
        }
    std::vector<Bytes> out;
    for (size_t i = 0; i < pieces.size();) {
      std::vector<Seg> segs;
      std::vector<uint64_t> at;
      std::vector<Placed> lines;
      const bool field = pieces[i].s.field;
      while (i < pieces.size() && segs.size() < max_srds && pieces[i].s.field == field) {
        segs.push_back(pieces[i].s);
        at.push_back(pieces[i].at);
        lines.push_back({pieces[i].line, pieces[i].at, pieces[i].s.length});
        ++i;
      }
      const bool field_ends = i == pieces.size() || pieces[i].s.field != field;
      const uint32_t stamp = ts + (field ? static_cast<uint32_t>(std::lround(protocols::video::ticks_per_frame(v) / 2)) : 0);
      out.push_back(packet({.marker = field_ends, .seq = seq++, .ts = stamp, .ssrc = ssrc}, segs, &frame, at));
      if (lines_of) lines_of->push_back(lines);
    }
    return out;
  }
};

Bytes reference_frame(uint64_t bytes, uint32_t seed) {
  Bytes f(bytes);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : f) {
    x = x * 1664525u + 1013904223u;
    b = std::byte(x >> 24);
  }
  return f;
}

ReorderConfig host_config(const VideoOptions& v, uint32_t max_streams = 1) {
  ReorderConfig c;
  c.mode = ReorderMode::rtp_video;
  c.frames = FrameTarget::host;
  c.video = v;
  c.max_streams = max_streams;
  c.max_open_frames = 2;
  c.frame_buffers = 8;
  return c;
}

struct Popped {
  uint64_t stream, frame;
  bool complete;
  Bytes bytes;
  std::vector<uint64_t> missing;
  uint32_t lines_missing;
};

std::vector<Popped> drain(HostFrameAssembler& a, const VideoOptions& v) {
  std::vector<Popped> got;
  HostFrameView f;
  while (a.pop(f)) {
    Popped p{f.stream, f.frame, f.complete, Bytes(f.bytes.begin(), f.bytes.end()), std::vector<uint64_t>((v.height + 63) / 64, ~uint64_t{0}), 0};
    p.lines_missing = video_missing_lines(v, f, p.missing);
    got.push_back(std::move(p));
    a.release(f);
  }
  return got;
}

std::vector<uint32_t> missing_list(const Popped& p, uint32_t height) {
  std::vector<uint32_t> lines;
  for (uint32_t l = 0; l < height; ++l)
    if (p.missing[l / 64] >> (l % 64) & 1) lines.push_back(l);
  return lines;
}

void host_frames_equal_the_reference(const VideoOptions& v, uint32_t per_line, uint32_t max_srds) {
  HostFrameAssembler a(host_config(v));
  Sender tx{.v = v, .per_line = per_line, .max_srds = max_srds};
  const uint64_t bytes = video_frame_bytes(v);
  const Bytes f0 = reference_frame(bytes, 1), f1 = reference_frame(bytes, 2), f2 = reference_frame(bytes, 3);
  const uint32_t tpf = static_cast<uint32_t>(protocols::video::ticks_per_frame(v));
  const uint32_t ts0 = 0xFFFFFFFFu - tpf / 2;  // frame 1 wraps the timestamp
  std::vector<std::vector<Placed>> lines;
  std::vector<Bytes> all = tx.frame_packets(f0, ts0, nullptr);
  std::vector<Bytes> p1 = tx.frame_packets(f1, ts0 + tpf, &lines);
  // A packet in the middle of frame 1 never arrives: one that straddles two lines if any.
  size_t lost = p1.size() / 2;
  for (size_t i = lost; i < p1.size(); ++i)
    if (lines[i].front().line != lines[i].back().line) {
      lost = i;
      break;
    }
  const std::vector<Placed> lost_pieces = lines[lost];
  p1.erase(p1.begin() + static_cast<long>(lost));
  all.insert(all.end(), p1.begin(), p1.end());
  std::vector<Bytes> p2 = tx.frame_packets(f2, ts0 + 2 * tpf, nullptr);
  p2.insert(p2.begin() + 4, p2[3]);  // a duplicate while its frame is open
  all.insert(all.end(), p2.begin(), p2.end());

  Bursts bursts;
  std::vector<Popped> got;
  for (size_t at = 0; at < all.size(); at += 16) {
    RxBurst b = bursts.make(all, at, std::min<size_t>(16, all.size() - at));
    a.receive(b, 0);
    for (auto& p : drain(a, v)) got.push_back(std::move(p));
  }
  a.flush();
  for (auto& p : drain(a, v)) got.push_back(std::move(p));

  ASSERT_EQ(got.size(), 3u);
  const uint64_t first = got[0].frame;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].frame, first + i);
    EXPECT_EQ(got[i].stream, tx.ssrc);
    EXPECT_EQ(got[i].bytes.size(), bytes);
  }
  EXPECT_TRUE(got[0].complete);
  EXPECT_TRUE(got[0].bytes == f0);
  EXPECT_EQ(got[0].lines_missing, 0u);
  EXPECT_TRUE(got[2].complete);
  EXPECT_TRUE(got[2].bytes == f2);
  // Frame 1: exactly the lost packet's lines missing (zeros), every other byte the reference's.
  EXPECT_FALSE(got[1].complete);
  std::vector<uint32_t> want;
  Bytes expected = f1;  // the lost segments zero
  for (const Placed& p : lost_pieces) {
    want.push_back(p.line);
    std::fill_n(expected.begin() + static_cast<long>(p.at), p.bytes, std::byte{0});
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(missing_list(got[1], v.height), want);
  EXPECT_EQ(got[1].lines_missing, want.size());
  EXPECT_TRUE(got[1].bytes == expected);
  EXPECT_FALSE(expected == f1);
  const HostFrameStats st = a.stats();
  EXPECT_EQ(st.packets, all.size());
  EXPECT_EQ(st.duplicate, 1u);
  EXPECT_EQ(st.malformed, 0u);
  EXPECT_EQ(st.frames_complete, 2u);
  EXPECT_EQ(st.frames_incomplete, 1u);
  EXPECT_EQ(st.lines_missing, want.size());
}

TEST(st2110_rtp_video, HostFramesEqualTheReferenceProgressive10Bit) {
  // Three segments a line, two a packet: packets straddle lines, so the lost one takes two.
  host_frames_equal_the_reference(video(96, 24, VideoSampling::ycbcr_422, 10, false, 60000, 1001), 3, 2);
}

TEST(st2110_rtp_video, HostFramesEqualTheReferenceInterlaced8Bit) {
  host_frames_equal_the_reference(video(64, 20, VideoSampling::ycbcr_422, 8, true, 30000, 1001), 2, 3);
}

TEST(st2110_rtp_video, HostFramesEqualTheReferenceInterlacedFrameRows) {
  VideoOptions v = video(64, 20, VideoSampling::ycbcr_422, 10, true, 30000, 1001);
  v.rows = VideoRows::frame;
  host_frames_equal_the_reference(v, 2, 3);
}

TEST(st2110_rtp_video, MissingLinesFromPresenceBits) {
  const VideoOptions v = video(4, 70, VideoSampling::ycbcr_422, 10);  // 10 bytes a line, pgroup 5
  std::vector<uint64_t> presence((70 * 2 + 63) / 64, 0);
  for (uint32_t g = 0; g < 140; ++g) presence[g / 64] |= uint64_t{1} << (g % 64);
  presence[0] &= ~(uint64_t{1} << 7);         // granule 7: line 3's second pgroup
  presence[2] &= ~(uint64_t{1} << (137 - 128));  // line 68
  std::vector<uint64_t> missing(2, ~uint64_t{0});
  EXPECT_EQ(video_missing_lines(v, presence, 5, missing), 2u);
  EXPECT_EQ(missing[0], uint64_t{1} << 3);
  EXPECT_EQ(missing[1], uint64_t{1} << (68 - 64));
  // Too few presence words: the lines past them count missing; a short `missing` only counts.
  std::vector<uint64_t> one(1);
  EXPECT_EQ(video_missing_lines(v, std::span<const uint64_t>(presence).first(1), 5, one), 1u + (70 - 32));
  EXPECT_EQ(one[0], (uint64_t{1} << 3) | (~uint64_t{0} << 32));
  // From bits that mark missing granules (a GPU frame's missing()): the complement.
  std::vector<uint64_t> absent(presence.size());
  for (size_t w = 0; w < absent.size(); ++w) absent[w] = ~presence[w];
  absent.back() &= (uint64_t{1} << (140 - 128)) - 1;  // nothing past the frame's granules
  EXPECT_EQ(video_lines_of_missing_granules(v, absent, 5, missing), 2u);
  EXPECT_EQ(missing[0], uint64_t{1} << 3);
  EXPECT_EQ(missing[1], uint64_t{1} << (68 - 64));
  // Words past its end are granules present (a complete frame may give none).
  EXPECT_EQ(video_lines_of_missing_granules(v, {}, 5, missing), 0u);
  EXPECT_EQ(missing[0] | missing[1], 0u);
}

}  // namespace
}  // namespace netdaq
