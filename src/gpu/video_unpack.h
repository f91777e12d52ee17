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
// 0: no staging, each thread loads its unit's words straight from global memory.
constexpr uint32_t kUnpackDefaultUnits = 4;

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
};

// Fills job; false (and *why when not null) when unpack_video cannot take these.
bool make_unpack_job(const VideoOptions& video, const void* frame, const VideoPlanes& out, UnpackJob& job,
                     std::string* why);

// Queues the job on stream; returns the launch error, never throws. units: see kUnpackDefaultUnits.
cudaError_t launch_unpack(const UnpackJob& job, cudaStream_t stream, uint32_t units = kUnpackDefaultUnits) noexcept;

}  // namespace netdaq::gpu
