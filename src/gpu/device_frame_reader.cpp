// DeviceFrameReader: two pinned slots, one copy stream, one event for the frame in flight.
#include "netdaq/device_frames.h"

#include <cuda_runtime_api.h>

#include <string>

#include "gpu/cuda_check.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

namespace {
constexpr uint64_t kNone = ~uint64_t{0};
}

struct DeviceFrameReader::Impl {
  const std::byte* frames = nullptr;
  size_t frame_bytes = 0, count = 0;
  int gpu = 0;
  std::byte* slots = nullptr;  // pinned, 2 x frame_bytes
  cudaStream_t stream = nullptr;
  cudaEvent_t read = nullptr;  // the copy of frame `in_flight` done
  uint64_t in_flight = kNone;
  uint64_t waits = 0;

  std::byte* slot_of(uint64_t k) const { return slots + (k % 2) * frame_bytes; }
  void start(uint64_t k) {
    check(cudaMemcpyAsync(slot_of(k), frames + (k % count) * frame_bytes, frame_bytes, cudaMemcpyDeviceToHost, stream),
          "video frames from the GPU: cudaMemcpyAsync of frame " + std::to_string(k));
    check(cudaEventRecord(read, stream), "video frames from the GPU: cudaEventRecord");
    in_flight = k;
  }
  void finish(bool count_wait) {
    if (in_flight == kNone) return;
    if (count_wait && cudaEventQuery(read) == cudaErrorNotReady) ++waits;
    check(cudaEventSynchronize(read), "video frames from the GPU: reading frame " + std::to_string(in_flight));
    in_flight = kNone;
  }
};

DeviceFrameReader::DeviceFrameReader(const void* frames, size_t frame_bytes, size_t count, int gpu)
    : impl_(std::make_unique<Impl>()) {
  if (!frames || frame_bytes == 0 || count == 0)
    throw Error(Errc::invalid_config, "video frames from the GPU: no frames given");
  Impl& m = *impl_;
  m.frames = static_cast<const std::byte*>(frames);
  m.frame_bytes = frame_bytes;
  m.count = count;
  m.gpu = gpu;
  use_device(gpu, "video frames from the GPU");
  check(cudaHostAlloc(reinterpret_cast<void**>(&m.slots), 2 * frame_bytes, cudaHostAllocDefault),
        "video frames from the GPU: cudaHostAlloc of two " + std::to_string(frame_bytes) + "-byte frames");
  check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "video frames from the GPU: cudaStreamCreate");
  check(cudaEventCreateWithFlags(&m.read, cudaEventDisableTiming), "video frames from the GPU: cudaEventCreate");
}

DeviceFrameReader::~DeviceFrameReader() {
  Impl& m = *impl_;
  if (m.stream) cudaStreamSynchronize(m.stream);
  if (m.read) cudaEventDestroy(m.read);
  if (m.stream) cudaStreamDestroy(m.stream);
  if (m.slots) cudaFreeHost(m.slots);
}

std::span<const std::byte> DeviceFrameReader::slots() const noexcept { return {impl_->slots, 2 * impl_->frame_bytes}; }

void DeviceFrameReader::begin_frame(uint64_t k) {
  Impl& m = *impl_;
  if (m.in_flight == k) {
    m.finish(true);
  } else {  // the first frame, or frames skipped: read this one now
    m.finish(false);
    m.start(k);
    m.finish(false);
  }
  m.start(k + 1);  // into the slot of frame k - 1, whose bytes are all in packets by now
}

uint64_t DeviceFrameReader::waits() const noexcept { return impl_->waits; }

DeviceCopy::DeviceCopy(std::span<const std::byte> host, int gpu) : size_(host.size()) {
  use_device(gpu, "video frames on the GPU");
  check(cudaMalloc(&data_, size_), "video frames on the GPU: cudaMalloc of " + std::to_string(size_) + " bytes");
  const cudaError_t e = cudaMemcpy(data_, host.data(), size_, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaFree(data_);
    check(e, "video frames on the GPU: cudaMemcpy");
  }
}

DeviceCopy::~DeviceCopy() { cudaFree(data_); }

}  // namespace netdaq::gpu
