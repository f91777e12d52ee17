// Host side of the video unpack (include/netdaq/video_unpack.h): which formats and planes it
// takes, and the CPU reference the GPU tests and benchmark compare the kernel with bit for bit.
// Plain C++, compiled in every build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "netdaq/video_unpack.h"

namespace netdaq::gpu {

// The wire formats the unpack handles.
enum class UnpackFormat : uint8_t { ycbcr422_10, ycbcr422_8, rgb_8 };

// False when unpack_video cannot take these; *why (when not null) then says why. Allocates
// only to write *why.
bool unpack_format(const VideoOptions& video, UnpackFormat& format) noexcept;
bool unpack_acceptable(const VideoOptions& video, const VideoPlanes& out, std::string* why);

// fp16 planes: sample x this scale (1 / (2^depth - 1) as a float), rounded to half.
float unpack_fp16_scale(uint32_t depth) noexcept;

// Plain-loop unpack on host memory (frame and out.data[] are host pointers): reads each
// pgroup bit by bit, big-endian, and writes its samples, exactly as the kernel must.
void unpack_reference(const VideoOptions& video, const std::byte* frame, const VideoPlanes& out);

}  // namespace netdaq::gpu
