// The video unpack kernel's job and launcher (include/netdaq/video_unpack.h is the API).
// Each block stages a tile of the frame in shared memory with 16-byte loads (coalesced,
// whatever the pgroup size), then each thread turns 8 pixels' pgroups into 8 samples per
// full-width plane (16 bytes, one store) and 4 per half-width plane (8 bytes), so a warp's
// stores are contiguous.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/host/video_unpack_reference.h"

namespace netdaq::gpu {

constexpr uint32_t kUnpackThreads = 256;
constexpr uint32_t kUnpackPixelsPerUnit = 8;  // pixels one thread unpacks at a time (a "unit")

// How a block gets its tile: units per thread staged through shared memory (1, 2 or 4), or
// 0: no staging, each thread loads its unit's words straight from global memory (L1 merges a
// warp's overlapping sectors). kUnpackAuto: 4-unit tiles when the frame has units for at least
// half a wave of them on this GPU (2160p on an H100/H200), else direct loads, which fill the
// GPU with 4x more blocks (1080p: 2,274 vs 1,923 GB/s on an H200; 2160p: 3,330 vs 3,277;
// bench/gpu/video_unpack.cu).
constexpr uint32_t kUnpackAuto = ~0u;

struct UnpackJob {
  const std::byte* in = nullptr;
  uint64_t in_bytes = 0;
  uint32_t pgroups = 0;      // in the frame
  uint32_t row_pgroups = 0;  // per line
  std::byte* out[3] = {};
  uint64_t pitch[3] = {};
  float scale = 0;           // fp16: sample x scale
  UnpackFormat format = UnpackFormat::ycbcr422_10;
  bool fp16 = false;
  bool vector_out = false;   // units never straddle a line and every plane suits 16/8-byte stores
  bool aligned_in = false;   // the frame is 16-byte aligned
  // Several frames in one launch (launch_unpack's `frames`, blockIdx.y): frame i at in + i x
  // in_frame_stride, its planes at out[p] + i x out_frame_stride (multiples of 16).
  uint64_t in_frame_stride = 0, out_frame_stride = 0;
};

// Fills job; false (and *why when not null) when unpack_video cannot take these.
bool make_unpack_job(const VideoOptions& video, const void* frame, const VideoPlanes& out, UnpackJob& job,
                     std::string* why);

// Queues the job on stream (the current device's); returns the launch error, never throws.
// units: 0, 1, 2, 4 or kUnpackAuto (above); frames: frames of the job's strides (at most 65535).
cudaError_t launch_unpack(const UnpackJob& job, cudaStream_t stream, uint32_t units = kUnpackAuto,
                          uint32_t frames = 1) noexcept;

}  // namespace netdaq::gpu
