// Frames in GPU memory for a CPU sender (issue 33: video-send --from-gpu). A sender that copies
// packet bytes out of host memory (the RFC 4175 packetizer) reads frame k from pinned host slot
// k % 2 while frame k + 1 comes over PCIe into the other slot, so it waits only when reading a
// frame takes longer than sending the one before it (1080p60 10-bit: 5 MB in ~0.2 ms of a
// 16.7 ms period). No CUDA header is needed to use it; in a build without CUDA the
// constructors throw "built without CUDA".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace netdaq::gpu {

class DeviceFrameReader {
 public:
  // frames: count frames of frame_bytes each in device memory of `gpu`, outliving the reader.
  // Throws netdaq::Error when there is no such GPU, or pinned memory cannot be had.
  DeviceFrameReader(const void* frames, size_t frame_bytes, size_t count, int gpu);
  ~DeviceFrameReader();
  DeviceFrameReader(const DeviceFrameReader&) = delete;
  DeviceFrameReader& operator=(const DeviceFrameReader&) = delete;

  // The two pinned host slots (2 x frame_bytes): give them to the sender as its frames, so that
  // its frame k is slot k % 2.
  std::span<const std::byte> slots() const noexcept;
  // Call before the first byte of frame k is read: returns when device frame k % count is in
  // slot k % 2, and starts reading frame k + 1 into the other slot (whose frame is sent).
  // Throws netdaq::Error with the CUDA error when a copy failed.
  void begin_frame(uint64_t k);
  uint64_t waits() const noexcept;  // begin_frame found its frame not read yet and waited

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Device memory holding a copy of `host` (the CLI's frames made GPU-resident), freed with it.
class DeviceCopy {
 public:
  DeviceCopy(std::span<const std::byte> host, int gpu);
  ~DeviceCopy();
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  const void* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace netdaq::gpu
