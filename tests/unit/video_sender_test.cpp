// The RFC 4175 / ST 2110-20 sender (src/sensors/video_sender): its packets read back with
// read_srd into the very frames it was given (progressive, interlaced, 8/10-bit 4:2:2, RGB),
// segments are whole pgroups of at most payload_size bytes, up to 3 per packet, lines split and
// joined across packets; RTP fields (V, PT, marker on the frame's or field's last packet,
// 16-bit sequence with the extended sequence number across the wrap, SSRC, timestamps exact
// at 60 and 59.94); ST 2110-21 narrow timing (TRO, T_DRAIN); config errors say what is allowed.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "netdaq/status.h"
#include "protocols/rtp_video_format.h"
#include "sensors/video_sender.h"

using namespace netdaq;
using namespace netdaq::sensors;
namespace video = netdaq::protocols::video;

namespace {

VideoSenderConfig config(uint32_t w, uint32_t h, uint8_t depth, uint32_t payload, bool interlaced = false,
                         uint32_t num = 60, uint32_t den = 1) {
  VideoSenderConfig c;
  c.video.width = w;
  c.video.height = h;
  c.video.depth = depth;
  c.video.interlaced = interlaced;
  c.video.rate_num = num;
  c.video.rate_den = den;
  c.payload_size = payload;
  return c;
}

std::vector<std::byte> random_frames(size_t bytes, uint32_t seed) {
  std::vector<std::byte> v(bytes);
  std::mt19937 rng(seed);
  for (auto& b : v) b = std::byte(rng() & 0xff);
  return v;
}

uint32_t be16(const std::byte* p) { return std::to_integer<uint32_t>(p[0]) << 8 | std::to_integer<uint32_t>(p[1]); }
uint32_t be32(const std::byte* p) { return be16(p) << 16 | be16(p + 2); }

struct Rtp {
  uint32_t version, pt, seq16, ts, ssrc, ext;
  bool marker;
};

Rtp rtp(const std::byte* p) {
  return {std::to_integer<uint32_t>(p[0]) >> 6, std::to_integer<uint32_t>(p[1]) & 0x7f, be16(p + 2), be32(p + 4),
          be32(p + 8), be16(p + 12), (std::to_integer<uint32_t>(p[1]) & 0x80) != 0};
}

// Receives one whole video frame's packets from s into out (the frame buffer, lines of both
// fields interleaved), checking each packet's structure; returns the packets' RTP headers.
std::vector<Rtp> receive_frame(VideoSender& s, std::vector<std::byte>& out, uint32_t max_segments_seen[1]) {
  const VideoOptions& v = s.config().video;
  const video::Pgroup g = video::pgroup_of(v.sampling, v.depth);
  out.assign(s.frame_bytes(), std::byte{0});
  std::vector<Rtp> hdrs;
  std::vector<std::byte> pkt(s.max_packet_bytes());
  for (uint32_t i = 0; i < s.packets_per_frame(); ++i) {
    const uint32_t len = s.next_packet(pkt);
    EXPECT_GT(len, 0u);
    EXPECT_LE(len, s.max_packet_bytes());
    hdrs.push_back(rtp(pkt.data()));
    const std::byte* p = pkt.data() + video::kRtpHeaderBytes + video::kExtSeqBytes;
    std::vector<video::Srd> srds;
    do {
      srds.push_back(video::read_srd(p));
      p += video::kSrdBytes;
    } while (srds.back().more && srds.size() < 8);
    EXPECT_LE(srds.size(), 3u);
    max_segments_seen[0] = std::max<uint32_t>(max_segments_seen[0], srds.size());
    uint32_t pixel_bytes = 0;
    for (const auto& d : srds) {
      EXPECT_EQ(d.length % g.bytes, 0u) << "segments are whole pgroups";
      EXPECT_EQ(d.offset % g.pixels, 0u);
      EXPECT_LE(d.offset / g.pixels * g.bytes + d.length, s.line_bytes());
      const uint64_t line = video::frame_line(v, d.row, d.field);
      EXPECT_LT(line, v.height);
      std::memcpy(out.data() + line * s.line_bytes() + d.offset / g.pixels * g.bytes, p, d.length);
      p += d.length;
      pixel_bytes += d.length;
    }
    EXPECT_LE(pixel_bytes, s.config().payload_size);
    EXPECT_EQ(p - pkt.data(), len) << "the packet ends with its last segment";
  }
  return hdrs;
}

}  // namespace

TEST(st2110VideoSender, Progressive1080p10BitFourPacketsPerLine) {
  auto c = config(1920, 1080, 10, 1200);
  VideoSender s(c);
  EXPECT_EQ(s.line_bytes(), 4800u);
  EXPECT_EQ(s.packets_per_frame(), 4320u);  // 4 x 1200 bytes per line
  EXPECT_EQ(s.max_packet_bytes(), 12u + 2 + 6 + 1200);
  const auto frames = random_frames(s.frame_bytes() * 2, 1);
  s.set_frames(frames);
  std::vector<std::byte> got;
  uint32_t maxseg = 0;
  for (uint32_t f = 0; f < 3; ++f) {  // the third is frame 0 again (looped)
    const auto hdrs = receive_frame(s, got, &maxseg);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), frames.begin() + (f % 2) * s.frame_bytes())) << "frame " << f;
    for (size_t i = 0; i < hdrs.size(); ++i) {
      EXPECT_EQ(hdrs[i].version, 2u);
      EXPECT_EQ(hdrs[i].pt, 96u);
      EXPECT_EQ(hdrs[i].ssrc, c.ssrc);
      EXPECT_EQ(hdrs[i].ts, f * 1500u);
      EXPECT_EQ(hdrs[i].marker, i + 1 == hdrs.size()) << "packet " << i;
      EXPECT_EQ(hdrs[i].seq16, (f * 4320 + i) & 0xffff);
    }
  }
  EXPECT_EQ(maxseg, 1u);
  EXPECT_EQ(s.frames_done(), 3u);
}

TEST(st2110VideoSender, LinesJoinedInPacketsUpToThreeSegments8Bit) {
  // 640 px 10-bit: 1600-byte lines in 1200-byte packets: a packet holds a line's end and the
  // next line's start (two SRDs, C set on the first).
  {
    VideoSender s(config(640, 480, 10, 1200));
    EXPECT_EQ(s.packets_per_frame(), 640u);  // 480 x 1600 / 1200
    const auto frames = random_frames(s.frame_bytes(), 2);
    s.set_frames(frames);
    std::vector<std::byte> got;
    uint32_t maxseg = 0;
    receive_frame(s, got, &maxseg);
    EXPECT_EQ(got, frames);
    EXPECT_EQ(maxseg, 2u);
  }
  // 8-bit 4:2:2 of 24 px (48-byte lines), 130-byte packets: 3 segments (48+48+32) at most, a
  // 130 rounded down to 128 (whole pgroups of 4 bytes).
  {
    auto c = config(24, 10, 8, 130);
    VideoSender s(c);
    const auto frames = random_frames(s.frame_bytes(), 3);
    s.set_frames(frames);
    std::vector<std::byte> got;
    uint32_t maxseg = 0;
    receive_frame(s, got, &maxseg);
    EXPECT_EQ(got, frames);
    EXPECT_EQ(maxseg, 3u);
    EXPECT_EQ(s.packets_per_frame(), (480u + 127) / 128);
  }
  // RGB 8-bit (pgroup 3 bytes, 1 px).
  {
    auto c = config(100, 7, 8, 200);
    c.video.sampling = VideoSampling::rgb;
    VideoSender s(c);
    EXPECT_EQ(s.line_bytes(), 300u);
    const auto frames = random_frames(s.frame_bytes(), 4);
    s.set_frames(frames);
    std::vector<std::byte> got;
    uint32_t maxseg = 0;
    receive_frame(s, got, &maxseg);
    EXPECT_EQ(got, frames);
  }
}

TEST(st2110VideoSender, Timestamps5994ExactAnd60) {
  VideoSender s60(config(16, 2, 10, 1200, false, 60, 1));
  VideoSender s5994(config(16, 2, 10, 1200, false, 60000, 1001));
  for (uint64_t k : {0ull, 1ull, 2ull, 3ull, 1000ull, 1000000ull}) {
    EXPECT_EQ(s60.timestamp_of(k), static_cast<uint32_t>(k * 1500));
    // 1501.5 ticks a frame: k x 3003 / 2, rounded down; never drifts.
    EXPECT_EQ(s5994.timestamp_of(k), static_cast<uint32_t>(k * 3003 / 2)) << k;
  }
  EXPECT_EQ(s5994.timestamp_of(1) - s5994.timestamp_of(0), 1501u);
  EXPECT_EQ(s5994.timestamp_of(2) - s5994.timestamp_of(1), 1502u);
  // 32-bit wrap from the first timestamp, and the RTP header carries it.
  auto c = config(16, 2, 10, 1200, false, 60000, 1001);
  c.first_timestamp = 0xFFFFFF00u;
  VideoSender w(c);
  const auto frames = random_frames(w.frame_bytes(), 5);
  w.set_frames(frames);
  std::vector<std::byte> pkt(w.max_packet_bytes());
  for (uint64_t k = 0; k < 4; ++k) {
    ASSERT_GT(w.next_packet(pkt), 0u);
    EXPECT_EQ(rtp(pkt.data()).ts, static_cast<uint32_t>(0xFFFFFF00u + k * 3003 / 2));
    EXPECT_TRUE(rtp(pkt.data()).marker);  // one packet a frame
  }
}

TEST(st2110VideoSender, TimestampsCountFromTheEpochFrame) {
  // ST 2110-10: RTP time is the 90 kHz clock since 1970-01-01 TAI, so frame k of a sender whose
  // frame 0 is the epoch's frame K carries floor((K + k) x ticks) mod 2^32: exact at 59.94 (1501.5
  // ticks) for any K, odd ones included, where adding K's timestamp to k's would be off by one.
  const uint64_t big = 107'748'461'095ull;  // 2026's frames since 1970 at 60 (odd)
  auto c = config(16, 2, 10, 1200, false, 60000, 1001);
  c.epoch_frame = big;
  VideoSender s(c);
  __extension__ using U128 = unsigned __int128;
  for (uint64_t k : {0ull, 1ull, 2ull, 7ull, 1'000'000ull})
    EXPECT_EQ(s.timestamp_of(k), static_cast<uint32_t>(U128(big + k) * 3003 / 2)) << k;
  VideoSender late(config(16, 2, 10, 1200, false, 60, 1));
  late.set_epoch_frame(big);
  EXPECT_EQ(late.timestamp_of(3), static_cast<uint32_t>((big + 3) * 1500));
}

TEST(st2110VideoSender, ExtendedSequenceNumberAcrossTheWrap) {
  auto c = config(16, 4, 8, 32);  // one line a packet
  c.first_sequence = 0x0001FFFE;
  c.ssrc = 0xdeadbeef;
  c.video.payload_type = 112;
  VideoSender s(c);
  const auto frames = random_frames(s.frame_bytes(), 6);
  s.set_frames(frames);
  std::vector<std::byte> pkt(s.max_packet_bytes());
  for (uint32_t i = 0; i < 6; ++i) {
    ASSERT_GT(s.next_packet(pkt), 0u);
    const Rtp r = rtp(pkt.data());
    const uint32_t seq = 0x0001FFFE + i;
    EXPECT_EQ(r.seq16, seq & 0xffff);
    EXPECT_EQ(r.ext, seq >> 16);
    EXPECT_EQ(r.pt, 112u);
    EXPECT_EQ(r.ssrc, 0xdeadbeefu);
  }
}

TEST(st2110VideoSender, InterlacedFieldsInTurnWithTheirOwnMarkerAndTimestamp) {
  // 1080i-like at 30000/1001 frames/s: field 0 = even lines (F=0), field 1 = odd lines (F=1).
  auto c = config(64, 12, 10, 100, true, 30000, 1001);
  VideoSender s(c);
  EXPECT_EQ(s.fields(), 2u);
  const uint32_t per_field = s.packets_per_field();
  EXPECT_EQ(per_field, (6u * 160 + 99) / 100 + 0);  // 160-byte lines, 100 B packets
  const auto frames = random_frames(s.frame_bytes() * 2, 7);
  s.set_frames(frames);
  std::vector<std::byte> pkt(s.max_packet_bytes());
  std::vector<std::byte> got(s.frame_bytes());
  for (uint32_t f = 0; f < 2; ++f) {
    std::fill(got.begin(), got.end(), std::byte{0});
    for (uint32_t i = 0; i < s.packets_per_frame(); ++i) {
      ASSERT_GT(s.next_packet(pkt), 0u);
      const Rtp r = rtp(pkt.data());
      const uint32_t field = i / per_field;
      EXPECT_EQ(r.marker, (i + 1) % per_field == 0) << "the M bit ends each field";
      // Each field its sampling instant: 3003 ticks a frame, 1501.5 a field.
      EXPECT_EQ(r.ts, static_cast<uint32_t>((2 * f + field) * 3003 / 2));
      const std::byte* p = pkt.data() + 14;
      std::vector<video::Srd> srds;
      do {
        srds.push_back(video::read_srd(p));
        p += 6;
      } while (srds.back().more);
      for (const auto& d : srds) {
        EXPECT_EQ(d.field, field == 1);
        EXPECT_LT(d.row, 6u);
        std::memcpy(got.data() + (2 * d.row + field) * s.line_bytes() + d.offset / 2 * 5, p, d.length);
        p += d.length;
      }
    }
    EXPECT_TRUE(std::equal(got.begin(), got.end(), frames.begin() + f * s.frame_bytes())) << "frame " << f;
  }
  EXPECT_EQ(s.fields_done(), 4u);
  EXPECT_EQ(s.frames_done(), 2u);
}

TEST(st2110VideoSender, NarrowGappedTiming) {
  VideoSender s(config(1920, 1080, 10, 1200, false, 60, 1));
  const St2110Timing t = s.timing();
  EXPECT_EQ(t.packets, 4320u);
  EXPECT_NEAR(t.t_frame_ns, 1e9 / 60, 1e-6);
  EXPECT_DOUBLE_EQ(t.r_active, 1080.0 / 1125.0);
  EXPECT_NEAR(t.tro_ns, 43.0 / 1125.0 * 1e9 / 60, 1e-3);         // 637.04 us
  EXPECT_NEAR(t.t_drain_ns, 1e9 / 60 * 1080 / 1125 / 4320, 1e-6);  // 3.7037 us
  EXPECT_EQ(t.vrx_start, 4u);  // the first packet leaves 4 x T_DRAIN before TRO
  EXPECT_EQ(t.departure_ns(0, 4), static_cast<uint64_t>(std::llround(t.tro_ns)));
  EXPECT_EQ(t.departure_ns(0, 0), static_cast<uint64_t>(std::llround(t.tro_ns - 4 * t.t_drain_ns)));
  // The last packet leaves TRO + (N-1) T_DRAIN after the frame starts, before the next frame.
  EXPECT_LT(t.departure_ns(0, 4319), t.frame_start_ns(1));
  EXPECT_NEAR(t.cmax(), 6.25, 1e-9);  // 4320 / (43200 x 0.96 x 1/60)
  // 59.94: frame k starts at k x 1001/60000 s exactly.
  VideoSender s2(config(1920, 1080, 10, 1200, false, 60000, 1001));
  const St2110Timing t2 = s2.timing();
  EXPECT_EQ(t2.frame_start_ns(60000), 1001ull * 1'000'000'000);
  EXPECT_EQ(t2.frame_start_ns(3), 50'050'000u);
  // 720p: TRO 28/750 of the frame. 1080i: the field period, 22 lines of 1125 per field x 2.
  VideoSender s3(config(1280, 720, 10, 1200, false, 50, 1));
  EXPECT_NEAR(s3.timing().tro_ns, 28.0 / 750.0 * 20e6, 1e-3);
  VideoSender s4(config(1920, 1080, 10, 1200, true, 25, 1));
  EXPECT_NEAR(s4.timing().t_frame_ns, 20e6, 1e-6);
  EXPECT_NEAR(s4.timing().tro_ns, 44.0 / 1125.0 * 20e6, 1e-3);
  EXPECT_EQ(s4.timing().packets, 2160u);
}

TEST(st2110VideoSender, ConfigErrorsSayWhatIsAllowed) {
  auto expect_error = [](VideoSenderConfig c, const char* text) {
    try {
      VideoSender s(c);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error(config(641, 480, 10, 1200), "width = 641: must be a multiple of 2");
  expect_error(config(640, 480, 9, 1200), "depth = 9: must be 8, 10, 12 or 16");
  expect_error(config(640, 481, 10, 1200, true), "height = 481");
  expect_error(config(640, 480, 10, 3), "payload_size = 3: must be 5..9000");
  expect_error(config(640, 480, 10, 1200, false, 0, 1), "rate = 0/1");
  auto c = config(640, 480, 10, 1200);
  c.video.payload_type = 33;
  expect_error(c, "payload_type = 33: must be a dynamic RTP payload type 96..127");
  VideoSender s(config(640, 480, 10, 1200));
  std::vector<std::byte> pkt(2000);
  EXPECT_EQ(s.next_packet(pkt), 0u) << "no frames set";
  std::vector<std::byte> odd(s.frame_bytes() + 1);
  EXPECT_THROW(s.set_frames(odd), Error);
  std::vector<std::byte> frame(s.frame_bytes());
  s.set_frames(frame);
  std::vector<std::byte> small(100);
  EXPECT_EQ(s.next_packet(small), 0u) << "a buffer too small takes nothing";
  EXPECT_EQ(s.packets(), 0u);
}

TEST(st2110VideoSender, TestPatternBarsAndAMovingBox) {
  VideoOptions v;
  v.width = 640;
  v.height = 480;
  v.depth = 10;
  v.rate_num = 60;
  const uint64_t fb = video::frame_bytes(v);
  std::vector<std::byte> a(fb), b(fb), a2(fb);
  write_video_test_pattern(v, 0, a);
  write_video_test_pattern(v, 1, b);
  write_video_test_pattern(v, 0, a2);
  EXPECT_EQ(a, a2) << "deterministic";
  EXPECT_NE(a, b) << "the box moves";
  // Line 0 is bars only: its first pgroup is 75% white, Cb 128 Y 180 Cr 128 Y 180 in 10 bits.
  const uint64_t w = uint64_t{128 << 2} << 30 | uint64_t{180 << 2} << 20 | uint64_t{128 << 2} << 10 | (180 << 2);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(std::to_integer<uint64_t>(a[i]), (w >> (8 * (4 - i))) & 0xff) << i;
  // Lines outside the box's rows are the same in both frames.
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 1600 * 100, b.begin()));
  v.depth = 8;
  std::vector<std::byte> c8(video::frame_bytes(v));
  write_video_test_pattern(v, 0, c8);
  EXPECT_EQ(std::to_integer<int>(c8[0]), 128);
  EXPECT_EQ(std::to_integer<int>(c8[1]), 180);
}
