// RFC 4175 / ST 2110-20 decoder (rtp_video.h says how frames are numbered). Checked per packet,
// in this order, each failure malformed with its reason:
//   RTP header (RFC 3550): 12 bytes, version 2, CSRCs and extension inside the first segment,
//   padding count inside the payload; payload type (video.payload_type, when set);
//   RFC 4175 payload header: extended sequence number, SRD headers until C = 0, each segment a
//   whole number of pixel groups starting on one, inside the line's width and the frame's (or
//   field's) rows (interlaced with video.rows: frame, the row's parity its field's), its bytes
//   inside the payload; at most kMaxSpans separate spans (segments
//   that continue the one before in the frame, such as whole lines, join it).
// Bytes after the last segment (before any padding) are not read. The extended sequence
// number is not checked: presence per pixel group tells lost, late and duplicate bytes.
#include "protocols/rtp_video.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace netdaq::protocols {
namespace {

constexpr const char* kShort = "RTP: shorter than the 12-byte RTP header";
constexpr const char* kHeadersSplit = "RTP: headers beyond the first segment";
constexpr const char* kVersion = "RTP: version is not 2";
constexpr const char* kPayloadType = "RTP: payload type is not video.payload_type";
constexpr const char* kCsrcs = "RTP: CSRC list beyond the packet";
constexpr const char* kExtension = "RTP: header extension beyond the packet";
constexpr const char* kPadding = "RTP: padding count 0 or beyond the payload";
constexpr const char* kNoPayloadHeader = "RFC 4175: no extended sequence number and SRD header";
constexpr const char* kSrdBeyond = "RFC 4175: SRD headers run past the payload (no header with C = 0)";
constexpr const char* kEmptySegment = "RFC 4175: an SRD of 0 bytes";
constexpr const char* kLength = "RFC 4175: SRD length is not a whole number of pixel groups";
constexpr const char* kOffset = "RFC 4175: SRD offset is not on a pixel group";
constexpr const char* kWidth = "RFC 4175: SRD offset + pixels beyond video.width";
constexpr const char* kRow = "RFC 4175: SRD row beyond video.height (lines of a field when interlaced, rows: field)";
constexpr const char* kParity =
    "RFC 4175: SRD row's parity is not its field's (video.rows: frame: field 0 on even lines, field 1 on odd)";
constexpr const char* kField = "RFC 4175: SRD field bit set in progressive video (video.interlaced: false)";
constexpr const char* kSegmentBeyond = "RFC 4175: SRD segments beyond the packet's payload";
constexpr const char* kTooManySpans = "RFC 4175: more than 4 separate line segments in one packet";
constexpr const char* kFarBehindText = "RTP: timestamp more than 64 frames behind the stream's newest";
constexpr const char* kBeforeFirst = "RTP: timestamp before the stream's frame 0";
constexpr const char* kStateless = "RTP video: decoded without decode_packet() (frames are numbered per SSRC)";

uint16_t be16(const std::byte* p) noexcept {
  return static_cast<uint16_t>(std::to_integer<uint32_t>(p[0]) << 8 | std::to_integer<uint32_t>(p[1]));
}
uint32_t be32(const std::byte* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}

// Byte i of the packet (first, then rest); false when it lies in neither.
bool byte_at(const PacketBytes& p, uint32_t i, uint32_t* out) noexcept {
  if (i < p.first.size()) {
    *out = std::to_integer<uint32_t>(p.first[i]);
    return true;
  }
  const size_t j = i - p.first.size();
  if (j >= p.rest.size()) return false;
  *out = std::to_integer<uint32_t>(p.rest[j]);
  return true;
}

}  // namespace

RtpVideoDecoder::RtpVideoDecoder(const VideoOptions& video, uint32_t max_streams)
    : video_(video),
      pgroup_(video::pgroup_of(video.sampling, video.depth)),
      line_bytes_(video::line_bytes(video)),
      frame_bytes_(video::frame_bytes(video)),
      rows_(video::srd_rows(video)),
      units_per_frame_(video.interlaced ? 2 : 1),
      unit_ticks_(video::ticks_per_frame(video) / (video.interlaced ? 2 : 1)),
      streams_(max_streams ? max_streams : 1) {}

void RtpVideoDecoder::decode(std::span<const std::byte>, uint32_t, Decoded& out) const noexcept {
  out.reset();
  out.malformed(kStateless);
}

RtpVideoDecoder::Stream* RtpVideoDecoder::stream_of(uint32_t ssrc) noexcept {
  if (streams_[last_].used && streams_[last_].ssrc == ssrc) return &streams_[last_];
  for (size_t i = 0; i < streams_.size(); ++i) {
    Stream& s = streams_[i];
    if (!s.used) s = Stream{.used = true, .ssrc = ssrc};  // the table fills in order: the first free entry ends the search
    if (s.ssrc == ssrc) {
      last_ = i;
      return &s;
    }
  }
  return nullptr;
}

bool RtpVideoDecoder::frame_of(Stream& s, uint32_t ts, bool field, uint64_t* frame, Decoded& out) noexcept {
  const int64_t per_frame = units_per_frame_;
  int64_t unit = 0;
  if (s.newest == kUnstarted) {
    // The first packet: its frame from the timestamp alone. Interlaced, a field 1 packet's
    // frame began half a frame earlier (RFC 4175 stamps fields apart); unit 2 x frame + F.
    const double two32 = 4294967296.0;
    const double frame_ticks = unit_ticks_ * per_frame;
    const double start = field && per_frame == 2 ? std::fmod(double(ts) - unit_ticks_ + two32, two32) : double(ts);
    const int64_t f = std::llround(start / frame_ticks);
    unit = f * per_frame + (field && per_frame == 2 ? 1 : 0);
    s.newest = unit;
    s.newest_ts = ts;
  } else if (ts == s.newest_ts) {
    unit = s.newest;  // the common case: another packet of the newest frame (or field)
  } else {
    const auto delta = static_cast<int32_t>(ts - s.newest_ts);  // wraps as the timestamp does
    unit = s.newest + std::llround(double(delta) / unit_ticks_);
    if (s.newest - unit > int64_t{kFarBehind} * per_frame) {
      if (++s.far_run < kResyncAfter) {
        ++counters_.far_behind;
        out.malformed(kFarBehindText);
        return false;
      }
      // A sender that restarted its timestamps: go on after the newest frame.
      ++counters_.resyncs;
      unit = (s.newest / per_frame + 1) * per_frame + (field && per_frame == 2 ? 1 : 0);
      s.newest = unit;
      s.newest_ts = ts;
    } else if (unit > s.newest) {
      s.newest = unit;
      s.newest_ts = ts;
    }
    if (unit < 0) {
      out.malformed(kBeforeFirst);
      return false;
    }
  }
  s.far_run = 0;
  *frame = static_cast<uint64_t>(unit / per_frame);
  return true;
}

void RtpVideoDecoder::decode_packet(const PacketBytes& p, Decoded& out) noexcept {
  out.reset();
  ++counters_.packets;
  const auto refuse = [&](const char* why) {
    ++counters_.malformed;
    out.malformed(why);
    out.nspans = 0;  // a refused packet has no spans
  };
  const uint32_t len = p.packet_len;
  const std::byte* b = p.first.data();
  const uint32_t head = p.first.size() < len ? static_cast<uint32_t>(p.first.size()) : len;  // readable headers
  if (len < video::kRtpHeaderBytes) return refuse(kShort);
  if (head < video::kRtpHeaderBytes) return refuse(kHeadersSplit);
  const uint32_t b0 = std::to_integer<uint32_t>(b[0]), b1 = std::to_integer<uint32_t>(b[1]);
  if (b0 >> 6 != 2) return refuse(kVersion);
  const bool padding = b0 & 0x20, extension = b0 & 0x10, marker = b1 & 0x80;
  const uint32_t csrcs = b0 & 0x0f, pt = b1 & 0x7f;
  if (video_.payload_type >= 0 && pt != static_cast<uint32_t>(video_.payload_type)) return refuse(kPayloadType);
  const uint32_t ts = be32(b + 4), ssrc = be32(b + 8);

  // The payload: after CSRCs and extension, before padding.
  uint32_t at = video::kRtpHeaderBytes + 4 * csrcs;
  if (at > len) return refuse(kCsrcs);
  if (at > head) return refuse(kHeadersSplit);
  if (extension) {
    if (at + 4 > len) return refuse(kExtension);
    if (at + 4 > head) return refuse(kHeadersSplit);
    at += 4 + 4 * uint32_t{be16(b + at + 2)};
    if (at > len) return refuse(kExtension);
  }
  uint32_t end = len;
  if (padding) {
    uint32_t count = 0;
    if (!byte_at(p, len - 1, &count) || count == 0 || count > len - at) return refuse(kPadding);
    end = len - count;
  }

  // RFC 4175: extended sequence number, then SRD headers until one with C = 0.
  if (at + video::kExtSeqBytes + video::kSrdBytes > end) return refuse(kNoPayloadHeader);
  at += video::kExtSeqBytes;
  const uint32_t srd_first = at;
  for (;;) {
    if (at + video::kSrdBytes > end) return refuse(kSrdBeyond);
    if (at + video::kSrdBytes > head) return refuse(kHeadersSplit);
    const bool more = (std::to_integer<uint32_t>(b[at + 4]) & 0x80) != 0;
    at += video::kSrdBytes;
    if (!more) break;
  }

  // The segments, in the headers' order, from the first byte after the headers.
  uint32_t data = at;
  bool field = false;
  for (uint32_t h = srd_first; h < at; h += video::kSrdBytes) {
    const video::Srd srd = video::read_srd(b + h);
    if (srd.length == 0) return refuse(kEmptySegment);
    if (srd.length % pgroup_.bytes) return refuse(kLength);
    if (srd.offset % pgroup_.pixels) return refuse(kOffset);
    const uint64_t pixels = uint64_t{srd.length} / pgroup_.bytes * pgroup_.pixels;
    if (srd.offset + pixels > video_.width) return refuse(kWidth);
    if (srd.row >= rows_) return refuse(kRow);
    if (srd.field && !video_.interlaced) return refuse(kField);
    if (video::frame_rows(video_) && (srd.row & 1u) != (srd.field ? 1u : 0u)) return refuse(kParity);
    if (srd.length > end - data) return refuse(kSegmentBeyond);
    const uint64_t offset = video::frame_line(video_, srd.row, srd.field) * line_bytes_ +
                            uint64_t{srd.offset} / pgroup_.pixels * pgroup_.bytes;
    Span* prev = out.nspans ? &out.spans[out.nspans - 1] : nullptr;
    if (prev && prev->offset + prev->bytes == offset) {
      prev->bytes += srd.length;  // continues the span before in the frame (and in the packet)
      ++counters_.merged;
    } else {
      if (out.nspans == kMaxSpans) return refuse(kTooManySpans);
      out.spans[out.nspans++] = Span{.frame = 0, .offset = offset, .packet_offset = data, .bytes = srd.length};
    }
    data += srd.length;
    field = srd.field;
  }

  // Numbered last: a refused packet neither takes a stream entry nor moves its frames.
  out.has_stream = true;
  out.stream = ssrc;
  uint64_t frame = 0;
  if (Stream* s = stream_of(ssrc)) {
    if (!frame_of(*s, ts, field, &frame, out)) {
      ++counters_.malformed;
      out.nspans = 0;
      out.has_stream = false;
      return;
    }
  }
  for (unsigned i = 0; i < out.nspans; ++i) out.spans[i].frame = frame;
  out.frame_bytes = frame_bytes_;
  out.marker = marker && (!video_.interlaced || field);  // interlaced: field 0's marker ends a field only
  out.has_timestamp = true;
  out.timestamp = ts;
  out.verdict = Verdict::data;
}

}  // namespace netdaq::protocols
