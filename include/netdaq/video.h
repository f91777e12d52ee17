// Uncompressed video frames (mode rtp_video, SMPTE ST 2110-20 / RFC 4175; docs/video.md): the
// SDP frame rate as the config writes it, and which lines of a received frame are missing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "netdaq/config.h"
#include "netdaq/gpu.h"
#include "netdaq/host_frames.h"

namespace netdaq {

// SDP's exactframerate: an integer ("50") or a ratio "N/D" ("60000/1001"), both parts 1..2^32-1.
// False (num, den untouched) for anything else.
bool parse_exactframerate(std::string_view text, uint32_t& num, uint32_t& den) noexcept;
// v's rate as SDP writes it: "50" when rate_den is 1, else "N/D".
std::string exactframerate_text(const VideoOptions& v);

// Bytes of one line and of one frame (both fields when interlaced) as RFC 4175 packs them
// (pixel groups, no padding); 0 when the sampling, depth and width make no whole pixel groups.
uint64_t video_line_bytes(const VideoOptions& v) noexcept;
uint64_t video_frame_bytes(const VideoOptions& v) noexcept;

// Which lines of a frame miss any byte, from its presence bits (bit g of presence[g / 64]:
// bytes [g x granule, (g + 1) x granule) arrived; granules past the end of `presence` count as
// missing). Clears `missing`, then sets bit l of missing[l / 64] for each missing line l (frame
// lines: interlaced fields interleaved) that it holds ((height + 63) / 64 words hold all);
// returns the count of missing lines over all v.height lines. Never allocates.
uint32_t video_missing_lines(const VideoOptions& v, std::span<const uint64_t> presence, uint32_t granule,
                             std::span<uint64_t> missing) noexcept;
// The same for a frame from HostFrameAssembler (frames: host).
inline uint32_t video_missing_lines(const VideoOptions& v, const HostFrameView& f, std::span<uint64_t> missing) noexcept {
  return video_missing_lines(v, f.presence, f.granule, missing);
}

// The same from bits that mark the missing granules (bit g of missing_granules[g / 64] set:
// granule g missing; granules past its end count as present), as gpu::Frame::missing() gives
// them for a frame in GPU memory (frames: gpu).
uint32_t video_lines_of_missing_granules(const VideoOptions& v, std::span<const uint64_t> missing_granules,
                                         uint32_t granule, std::span<uint64_t> missing) noexcept;
inline uint32_t video_missing_lines(const VideoOptions& v, const gpu::Frame& f, std::span<uint64_t> missing) noexcept {
  return video_lines_of_missing_granules(v, f.missing(), f.info().granule, missing);
}

}  // namespace netdaq
