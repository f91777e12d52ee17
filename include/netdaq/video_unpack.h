// Unpacking RFC 4175 frames in GPU memory into planes (docs/video-gpu.md): a frame of
// pixel groups (lines of pgroups, no padding, as mode rtp_video's FramePipeline delivers it)
// becomes three planes of 16-bit samples, integers or fp16. No CUDA header is needed to use
// it; in a build without CUDA unpack_video throws "built without CUDA".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "netdaq/config.h"
#include "netdaq/gpu.h"

namespace netdaq::gpu {

enum class PlaneType : uint8_t {
  uint16,  // the sample's value, 0..2^depth - 1, in the low bits (10-bit: 0..1023)
  fp16,    // IEEE half: value x (1 / (2^depth - 1)) in float, rounded to nearest even (0..1.0)
};

// Where the planes go: three planes in GPU memory, each `height` lines of
// plane_width(video, p) samples of `type`, `pitch[p]` bytes apart.
//   YCbCr-4:2:2: Y (width), Cb (width / 2), Cr (width / 2)
//   RGB:         R, G, B (width each)
struct VideoPlanes {
  void* data[3] = {};
  size_t pitch[3] = {};
  PlaneType type = PlaneType::uint16;
};

// Samples per line of plane p (0..2) of this format.
uint32_t plane_width(const VideoOptions& video, int plane) noexcept;

// "" when unpack_video takes this format and these planes; otherwise why not (the formats:
// YCbCr-4:2:2 8 and 10 bit, RGB 8 bit; each plane non-null, 2-byte aligned, pitch >= its
// line). Full speed also needs the frame 16-byte aligned, the width a multiple of 8 pixels,
// and the planes and pitches 16-byte aligned (8 for Cb, Cr); anything else takes a slower
// path with the same result.
std::string video_unpack_check(const VideoOptions& video, const VideoPlanes& out);

// Queues the unpack of `frame` (device memory: height lines of line_bytes(video) each,
// RFC 4175 section 4.3, big-endian bit order; interlaced frames as the pipeline interleaves
// them) into `out` on `stream` (e.g. FramePipeline::stream(), so it follows the frame's
// placement). No allocation, no synchronization. Throws Error(Errc::unsupported) with
// video_unpack_check's reason, or the CUDA launch error.
void unpack_video(const VideoOptions& video, const void* frame, const VideoPlanes& out, Stream stream);

}  // namespace netdaq::gpu
