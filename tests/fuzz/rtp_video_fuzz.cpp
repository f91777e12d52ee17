// libFuzzer target: RtpVideoDecoder (src/protocols/rtp_video.h), which reads every RTP datagram
// an rtp_video queue receives. The decoder keeps state per SSRC (frame numbers from
// timestamps), so an input is a run of packets: records of a 16-bit big-endian length and that
// many bytes (a last record cut short takes what is left).
//
// Each packet goes to one decoder per format (1080p 10-bit 4:2:2 at 59.94, payload type any;
// interlaced 64x16 8-bit 4:2:2 at 29.97, payload type 96; 100x10 RGB 8-bit at 50; 64x8 10-bit
// 4:4:4 at 25, pgroups of 15 bytes / 4 pixels), each with two streams. Before each packet a
// copy of the decoder takes it with only its first `cut` bytes in the first segment (the rest
// in a second); packets lie in exact-size heap buffers, so AddressSanitizer reports any read
// past them. Checks:
//   - the verdict is data or malformed; malformed has a non-empty reason and no spans;
//   - data: 1..kMaxSpans spans of one frame, each non-empty, whole pixel groups, inside the
//     packet and the frame, following one another in the packet, none continuing the span
//     before in the frame (those join it); stream, timestamp and frame size as the packet and
//     the format say; the marker only with the RTP marker bit;
//   - split: the same as whole, except "RTP: headers beyond the first segment" where the cut
//     falls before the first segment's bytes;
//   - counters: packets and malformed count every packet and every refusal.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocols/rtp_video.h"

#define NDQ_FUZZER "rtp_video_fuzz"
#include "decoder_fuzz.h"

namespace {

using netdaq::VideoOptions;
using netdaq::VideoSampling;
using netdaq::protocols::Decoded;
using netdaq::protocols::kMaxSpans;
using netdaq::protocols::PacketBytes;
using netdaq::protocols::RtpVideoDecoder;
using netdaq::protocols::Verdict;
namespace video = netdaq::protocols::video;

using ndqfuzz::Buf;

constexpr const char* kHeadersSplit = "RTP: headers beyond the first segment";

VideoOptions format(uint32_t w, uint32_t h, VideoSampling s, uint8_t depth, bool interlaced, uint32_t num,
                    uint32_t den, int16_t pt) {
  return VideoOptions{.width = w, .height = h, .sampling = s, .depth = depth, .interlaced = interlaced,
                      .rate_num = num, .rate_den = den, .payload_type = pt};
}

const VideoOptions kFormats[] = {
    format(1920, 1080, VideoSampling::ycbcr_422, 10, false, 60000, 1001, -1),
    format(64, 16, VideoSampling::ycbcr_422, 8, true, 30000, 1001, 96),
    format(100, 10, VideoSampling::rgb, 8, false, 50, 1, -1),
    format(64, 8, VideoSampling::ycbcr_444, 10, false, 25, 1, -1),
    [] {  // interlaced with rows: frame (GStreamer's numbering): rows 0..15, parity = F
      VideoOptions v = format(64, 16, VideoSampling::ycbcr_422, 8, true, 30000, 1001, 96);
      v.rows = netdaq::VideoRows::frame;
      return v;
    }(),
};
constexpr size_t kFormatCount = sizeof kFormats / sizeof kFormats[0];

bool same(const Decoded& a, const Decoded& b) {
  if (a.verdict != b.verdict || std::strcmp(a.reason, b.reason) != 0 || a.has_stream != b.has_stream ||
      a.stream != b.stream || a.has_timestamp != b.has_timestamp || a.timestamp != b.timestamp ||
      a.nspans != b.nspans || a.frame_bits != b.frame_bits || a.frame_bytes != b.frame_bytes || a.marker != b.marker)
    return false;
  for (unsigned i = 0; i < a.nspans && i < kMaxSpans; ++i) {
    const auto &x = a.spans[i], &y = b.spans[i];
    if (x.frame != y.frame || x.offset != y.offset || x.packet_offset != y.packet_offset || x.bytes != y.bytes)
      return false;
  }
  return true;
}

void scribble(Decoded& d) {
  std::memset(static_cast<void*>(&d), 0xA5, sizeof d);
  d.reason = "scribbled";
}

uint32_t be32(const std::byte* p) {
  return std::to_integer<uint32_t>(p[0]) << 24 | std::to_integer<uint32_t>(p[1]) << 16 |
         std::to_integer<uint32_t>(p[2]) << 8 | std::to_integer<uint32_t>(p[3]);
}

void check_decoded(const Decoded& d, const VideoOptions& v, const Buf& pkt, size_t cut) {
  const size_t size = pkt.size;
  CHECK(d.verdict == Verdict::data || d.verdict == Verdict::malformed);
  CHECK(d.reason != nullptr);
  CHECK(d.nitems == 0);
  if (d.verdict == Verdict::malformed) {
    CHECK(d.reason[0] != '\0');
    CHECK(d.nspans == 0);
    return;
  }
  const video::Pgroup pg = video::pgroup_of(v.sampling, v.depth);
  const uint64_t frame_bytes = video::frame_bytes(v);
  CHECK(size >= 12 + 2 + 6);
  CHECK(d.nspans >= 1 && d.nspans <= kMaxSpans);
  CHECK(d.has_stream && d.stream == be32(pkt.bytes.get() + 8));
  CHECK(d.has_timestamp && d.timestamp == be32(pkt.bytes.get() + 4));
  CHECK(d.frame_bits == 64 && d.frame_bytes == frame_bytes);
  CHECK(!d.marker || (std::to_integer<uint32_t>(pkt.bytes[1]) & 0x80));
  for (unsigned i = 0; i < d.nspans; ++i) {
    const auto& s = d.spans[i];
    CHECK(s.bytes > 0 && s.bytes % pg.bytes == 0);
    CHECK(s.offset % pg.bytes == 0);
    CHECK(s.offset + s.bytes <= frame_bytes);
    CHECK(s.packet_offset >= 12 + 2 + 6 && uint64_t{s.packet_offset} + s.bytes <= size);
    CHECK(s.frame == d.spans[0].frame);
    if (i == 0) continue;
    const auto& prev = d.spans[i - 1];
    CHECK(s.packet_offset == prev.packet_offset + prev.bytes);
    CHECK(s.offset != prev.offset + prev.bytes);
  }
}

struct Lane {
  VideoOptions v;
  RtpVideoDecoder decoder;
  explicit Lane(const VideoOptions& o) : v(o), decoder(o, 2) {}
};

void feed(Lane& lane, const Buf& pkt, size_t cut) {
  const size_t size = pkt.size;
  const auto len = static_cast<uint32_t>(size);
  const std::span<const std::byte> all = pkt.span();
  const Buf head(reinterpret_cast<const uint8_t*>(pkt.bytes.get()), cut);
  const Buf tail(reinterpret_cast<const uint8_t*>(pkt.bytes.get()) + cut, size - cut);

  RtpVideoDecoder split_decoder = lane.decoder;  // the same state, fed the packet in two buffers
  const auto before = lane.decoder.counters();
  Decoded whole, split;
  scribble(whole);
  lane.decoder.decode_packet(PacketBytes{{}, all, {}, len}, whole);
  check_decoded(whole, lane.v, pkt, size);
  const auto after = lane.decoder.counters();
  CHECK(after.packets == before.packets + 1);
  CHECK(after.malformed == before.malformed + (whole.verdict == Verdict::malformed ? 1 : 0));

  scribble(split);
  split_decoder.decode_packet(PacketBytes{{}, head.span(), tail.span(), len}, split);
  check_decoded(split, lane.v, pkt, cut);
  if (same(split, whole)) return;
  CHECK(split.verdict == Verdict::malformed && std::strcmp(split.reason, kHeadersSplit) == 0);
  CHECK(cut < size);
  if (whole.verdict == Verdict::data) CHECK(cut < whole.spans[0].packet_offset);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  std::vector<Lane> lanes;
  lanes.reserve(kFormatCount);
  for (const VideoOptions& v : kFormats) lanes.emplace_back(v);
  for (size_t at = 0; at + 2 <= size;) {
    size_t n = size_t{data[at]} << 8 | data[at + 1];
    at += 2;
    if (n > size - at) n = size - at;
    const Buf pkt(data + at, n);
    // Where to cut: from the packet's length and last bytes, so that mutations of a valid
    // packet's segment bytes move the cut without touching its headers.
    uint32_t tail = 0;
    if (n >= 4) std::memcpy(&tail, data + at + n - 4, 4);
    const size_t cut = static_cast<size_t>((uint64_t{tail} * 0x9E3779B1u + n) % (n + 1));
    for (Lane& lane : lanes) feed(lane, pkt, cut);
    at += n;
  }
  return 0;
}
