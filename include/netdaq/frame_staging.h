// Frames from GPU memory into pinned host memory, for a sender whose transport cannot read GPU
// memory (Debian's UCX is built without CUDA: no cuda_copy / cuda_ipc; docs/fleet.md, "GPU
// frames"). N pinned staging buffers of one size and a copy stream of their own: stage()
// starts a device-to-host copy into a free buffer, ready() hands out buffers whose copy
// finished (in staging order), release() frees one when the sender no longer reads it. Every
// stage() call ends counted once: staged (its copy finished), no_buffer (every buffer busy),
// too_big, or copy_failed. No CUDA header is needed to use it; in a build without CUDA the
// constructor throws "built without CUDA". One thread uses an instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace netdaq::gpu {

struct StagingStats {
  uint64_t frames_staged = 0;  // copies that finished
  uint64_t bytes_staged = 0;   // ... and their bytes (device -> pinned host over PCIe)
  uint64_t no_buffer = 0;      // stage() refused: every staging buffer was busy
  uint64_t too_big = 0;        // stage() refused: larger than a staging buffer
  uint64_t copy_failed = 0;    // the copy could not start or the GPU reported it failed
};

class FrameStaging {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  // buffers x buffer_bytes of pinned host memory, for copies from GPU `gpu`. Throws Error.
  FrameStaging(uint32_t buffers, size_t buffer_bytes, int gpu);
  ~FrameStaging();  // waits for copies in flight
  FrameStaging(const FrameStaging&) = delete;
  FrameStaging& operator=(const FrameStaging&) = delete;

  // Starts copying `bytes` bytes at device pointer `src` into a free buffer and returns its
  // index; kNone when refused (counted). The source must stay valid until ready() returns the
  // buffer. Never throws, allocates or blocks.
  uint32_t stage(const void* src, size_t bytes) noexcept;
  // The oldest buffer whose copy is over, if any: true with `buffer` set; `copied` false when
  // the copy failed (counted copy_failed; the buffer still needs release()).
  bool ready(uint32_t& buffer, bool& copied) noexcept;
  // Waits until every copy started is over (then ready() hands them all out); false on error.
  bool synchronize() noexcept;
  // The staged bytes of a buffer that ready() handed out.
  std::span<const std::byte> bytes(uint32_t buffer) const noexcept;
  void release(uint32_t buffer) noexcept;

  uint32_t buffers() const noexcept;
  size_t buffer_bytes() const noexcept;
  uint32_t busy() const noexcept;  // staged or being copied, not yet released
  StagingStats stats() const noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace netdaq::gpu
