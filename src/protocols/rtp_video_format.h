// RFC 4175 / SMPTE ST 2110-20 wire layout and pixel-group arithmetic, shared by the rtp_video
// decoder (rtp_video.cpp), the sender (sensors/video_sender) and the GPU unpack kernel.
// RTP (RFC 3550): V=2 P X CC | M PT | sequence (16) | timestamp (32) | SSRC (32) [| CSRC...]
// [| extension]; then RFC 4175's payload header: extended sequence number (16, the high half
// of a 32-bit sequence), one or more sample row data (SRD) headers of 6 bytes:
//   length (16) | F (1) row number (15) | C (1) offset in pixels (15)
// (C set: another SRD header follows), then the segments' bytes in the headers' order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "netdaq/config.h"

namespace netdaq::protocols::video {

inline constexpr uint32_t kRtpClockHz = 90'000;  // ST 2110-20's RTP clock
inline constexpr uint32_t kRtpHeaderBytes = 12;  // without CSRCs or extension
inline constexpr uint32_t kExtSeqBytes = 2;
inline constexpr uint32_t kSrdBytes = 6;
inline constexpr uint32_t kMaxRow = 0x7fff, kMaxOffset = 0x7fff;  // 15-bit SRD fields

// A pixel group (RFC 4175 section 4.3): the smallest whole number of pixels that fills whole
// bytes for a sampling and depth; segments start and end on pgroups.
struct Pgroup {
  uint32_t bytes = 0;   // 0: the sampling/depth pair is not defined
  uint32_t pixels = 0;
};

constexpr Pgroup pgroup_of(VideoSampling s, uint32_t depth) noexcept {
  if (s == VideoSampling::ycbcr_422) {  // Cb Y0 Cr Y1: 4 components per 2 pixels
    switch (depth) {
      case 8: return {4, 2};
      case 10: return {5, 2};
      case 12: return {6, 2};
      case 16: return {8, 2};
      default: return {};
    }
  }
  switch (depth) {  // 3 components per pixel (YCbCr-4:4:4, RGB)
    case 8: return {3, 1};
    case 10: return {15, 4};
    case 12: return {9, 2};
    case 16: return {6, 1};
    default: return {};
  }
}

// Bytes of one line (RFC 4175 packs lines without padding); 0 when width is not a whole
// number of pgroups.
constexpr uint64_t line_bytes(const VideoOptions& v) noexcept {
  const Pgroup g = pgroup_of(v.sampling, v.depth);
  if (g.bytes == 0 || v.width % g.pixels != 0) return 0;
  return uint64_t{v.width} / g.pixels * g.bytes;
}

constexpr uint64_t frame_bytes(const VideoOptions& v) noexcept { return line_bytes(v) * v.height; }

// Interlaced rows counted in frame lines (video.rows: frame).
constexpr bool frame_rows(const VideoOptions& v) noexcept { return v.interlaced && v.rows == VideoRows::frame; }

// SRD rows of a frame (progressive, or interlaced rows: frame) or of a field (rows: field).
constexpr uint32_t srd_rows(const VideoOptions& v) noexcept {
  return v.interlaced && v.rows == VideoRows::field ? v.height / 2 : v.height;
}

// The line of the frame buffer an SRD row lands on: progressive, the row; interlaced, field 0's
// rows on even lines, field 1's on odd ones (a frame holds both fields interleaved): rows: field
// numbers lines within the field (row r of field F: line 2r + F), rows: frame numbers the
// frame's lines themselves (the decoder refuses a row whose parity is not F's).
constexpr uint64_t frame_line(const VideoOptions& v, uint32_t row, bool field) noexcept {
  if (!v.interlaced || v.rows == VideoRows::frame) return row;
  return uint64_t{row} * 2 + (field ? 1 : 0);
}

// The SRD row a sender writes for row r within field F (the inverse of frame_line()).
constexpr uint32_t srd_row(const VideoOptions& v, uint32_t field_row, bool field) noexcept {
  return frame_rows(v) ? field_row * 2 + (field ? 1 : 0) : field_row;
}

// RTP timestamp ticks of one frame (90 kHz x rate_den / rate_num; 1501.5 at 59.94).
constexpr double ticks_per_frame(const VideoOptions& v) noexcept {
  return v.rate_num == 0 ? 0.0 : double(kRtpClockHz) * v.rate_den / v.rate_num;
}

// An SRD header's fields.
struct Srd {
  uint16_t length = 0;   // bytes of the segment
  bool field = false;    // F: second field (interlaced)
  uint16_t row = 0;      // 15 bits
  bool more = false;     // C: another SRD header follows
  uint16_t offset = 0;   // 15 bits, in pixels
};

inline Srd read_srd(const std::byte* p) noexcept {
  const auto b = [p](int i) { return std::to_integer<uint32_t>(p[i]); };
  Srd s;
  s.length = static_cast<uint16_t>(b(0) << 8 | b(1));
  s.field = (b(2) & 0x80) != 0;
  s.row = static_cast<uint16_t>((b(2) & 0x7f) << 8 | b(3));
  s.more = (b(4) & 0x80) != 0;
  s.offset = static_cast<uint16_t>((b(4) & 0x7f) << 8 | b(5));
  return s;
}

inline void write_srd(std::byte* p, const Srd& s) noexcept {
  p[0] = std::byte(s.length >> 8);
  p[1] = std::byte(s.length & 0xff);
  p[2] = std::byte((s.field ? 0x80 : 0) | ((s.row >> 8) & 0x7f));
  p[3] = std::byte(s.row & 0xff);
  p[4] = std::byte((s.more ? 0x80 : 0) | ((s.offset >> 8) & 0x7f));
  p[5] = std::byte(s.offset & 0xff);
}

}  // namespace netdaq::protocols::video
