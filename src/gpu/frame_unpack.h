// Mode rtp_video with video.unpack set: FramePipeline's planes. Each frame buffer gets its
// planes and an event, allocated once at construction (a running persistent kernel makes a
// later cudaMalloc / cudaFree wait forever, docs/gpu.md); per frame only a launch and an
// event record: no allocation, no throw.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "gpu/video_unpack.h"
#include "netdaq/config.h"
#include "netdaq/video_unpack.h"

namespace netdaq::gpu {

class FrameUnpacker {
 public:
  // Frame buffer b is at frames + b x frame_bytes. Allocates on alloc_stream (stream-ordered,
  // waited for here) and frees there. Throws Error naming `who` (format, CUDA).
  FrameUnpacker(const ReorderConfig& cfg, std::byte* frames, size_t frame_bytes, cudaStream_t alloc_stream,
                const std::string& who);
  ~FrameUnpacker();
  FrameUnpacker(const FrameUnpacker&) = delete;
  FrameUnpacker& operator=(const FrameUnpacker&) = delete;

  // Queues buffer b's unpack on `stream` (after its placement there), then its event.
  cudaError_t launch(uint32_t b, cudaStream_t stream) noexcept;
  // cudaSuccess once buffer b's last launch has run; cudaErrorNotReady before.
  cudaError_t query(uint32_t b) const noexcept { return cudaEventQuery(events_[b]); }
  const VideoPlanes& planes(uint32_t b) const noexcept { return planes_[b]; }

 private:
  void setup(const VideoOptions& v, uint32_t buffers, std::byte* frames, size_t frame_bytes, size_t per_frame,
             const size_t* pitch, const std::string& who);
  void free_all() noexcept;

  std::vector<VideoPlanes> planes_;
  std::vector<UnpackJob> jobs_;
  std::vector<cudaEvent_t> events_;
  std::byte* mem_ = nullptr;
  cudaStream_t alloc_stream_ = nullptr;
};

}  // namespace netdaq::gpu
