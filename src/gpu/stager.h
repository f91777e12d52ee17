// Staged delivery for packets the NIC cannot write into GPU memory (socket, afxdp, dpdk
// without GPUDirect): a burst's packets, in pinned host buffers scattered over a pool, are
// copied in one batched async copy into a packed device staging buffer. One staging buffer
// per job slot, so receive goes on while the previous batch is still being copied.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace netdaq::gpu {

class Stager {
 public:
  // `slots` device buffers of max_packets * in_bytes each on GPU `gpu`. Throws Error.
  Stager(int gpu, uint32_t slots, uint32_t max_packets, uint32_t in_bytes);
  ~Stager();
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  // Enqueues on `stream` the copy of srcs[0..count) (in_bytes each, pinned host or device
  // memory) into slot's buffer, packed: packet i lands at slot_base(slot) + i * in_bytes.
  // count <= max_packets. Never throws or allocates; returns the CUDA error (cudaSuccess).
  cudaError_t stage(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;

  std::byte* slot_base(uint32_t slot) const noexcept;
  uint32_t slots() const noexcept { return slots_; }
  uint32_t max_packets() const noexcept { return max_packets_; }
  uint32_t in_bytes() const noexcept { return in_bytes_; }

 private:
  uint32_t slots_, max_packets_, in_bytes_;
  std::byte* device_ = nullptr;  // slots * max_packets * in_bytes
  void** dsts_ = nullptr;        // scratch for the batched copy call (host)
  size_t* sizes_ = nullptr;
};

}  // namespace netdaq::gpu
