// FrameUnpacker (frame_unpack.h): planes and events per frame buffer, one unpack launch per frame.
#include "gpu/frame_unpack.h"

#include "gpu/cuda_check.h"
#include "netdaq/status.h"

namespace netdaq::gpu {
namespace {

constexpr size_t kPlaneAlign = 64;  // pitches and plane starts: the kernel's vector stores need 16

size_t round_up(size_t n) { return (n + kPlaneAlign - 1) / kPlaneAlign * kPlaneAlign; }

}  // namespace

FrameUnpacker::FrameUnpacker(const ReorderConfig& cfg, std::byte* frames, size_t frame_bytes,
                             cudaStream_t alloc_stream, const std::string& who)
    : alloc_stream_(alloc_stream) {
  const VideoOptions& v = cfg.video;
  const uint32_t buffers = cfg.frame_buffers;
  size_t pitch[3], per_frame = 0;
  for (int p = 0; p < 3; ++p) {
    pitch[p] = round_up(size_t{plane_width(v, p)} * 2);
    per_frame += pitch[p] * v.height;
  }
  const size_t total = per_frame * buffers;
  check(cudaMallocAsync(reinterpret_cast<void**>(&mem_), total, alloc_stream),
        who + ": cudaMallocAsync of " + std::to_string(total) + " bytes of video planes");
  try {
    check(cudaStreamSynchronize(alloc_stream), who + ": video plane allocation");
    setup(v, buffers, frames, frame_bytes, per_frame, pitch, who);
  } catch (...) {
    free_all();
    throw;
  }
}

void FrameUnpacker::setup(const VideoOptions& v, uint32_t buffers, std::byte* frames, size_t frame_bytes,
                          size_t per_frame, const size_t* pitch, const std::string& who) {
  planes_.resize(buffers);
  jobs_.resize(buffers);
  events_.assign(buffers, nullptr);
  for (uint32_t b = 0; b < buffers; ++b) {
    VideoPlanes& out = planes_[b];
    out.type = v.unpack == VideoUnpack::fp16 ? PlaneType::fp16 : PlaneType::uint16;
    std::byte* at = mem_ + per_frame * b;
    for (int p = 0; p < 3; ++p) {
      out.data[p] = at;
      out.pitch[p] = pitch[p];
      at += pitch[p] * v.height;
    }
    std::string why;
    if (!make_unpack_job(v, frames + frame_bytes * b, out, jobs_[b], &why))
      throw Error(Errc::invalid_config, who + ": video.unpack " + to_string(v.unpack) + ": " + why);
    check(cudaEventCreateWithFlags(&events_[b], cudaEventDisableTiming), who + ": cudaEventCreate");
  }
}

FrameUnpacker::~FrameUnpacker() { free_all(); }

void FrameUnpacker::free_all() noexcept {
  for (cudaEvent_t e : events_)
    if (e) cudaEventDestroy(e);
  if (mem_) {
    cudaFreeAsync(mem_, alloc_stream_);
    cudaStreamSynchronize(alloc_stream_);
    mem_ = nullptr;
  }
  events_.clear();
}

cudaError_t FrameUnpacker::launch(uint32_t b, cudaStream_t stream) noexcept {
  const cudaError_t err = launch_unpack(jobs_[b], stream);
  return err != cudaSuccess ? err : cudaEventRecord(events_[b], stream);
}

}  // namespace netdaq::gpu
