// Staged delivery for packets the NIC cannot write into GPU memory (socket, afxdp, dpdk
// without GPUDirect): a burst's packets, in pinned host buffers scattered over a pool, are
// gathered into a packed device staging buffer. One staging buffer per job slot, so receive
// goes on while the previous batch is still being moved.
//
// Two engines (bench/gpu/README.md has the figures):
//   sm (default)  the place kernel (launch_place, raw -> raw) reads the packets over PCIe
//                 itself: one kernel launch per burst; the SMs keep thousands of small reads
//                 in flight, where the copy engines pay a fixed cost per copy.
//   copy_engine   one cudaMemcpyBatchAsync per burst (packets adjacent in the pool merged).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/place_job.h"

namespace netdaq::gpu {

enum class StagerEngine : uint8_t { sm, copy_engine };

class Stager {
 public:
  // `slots` device buffers of max_packets * in_bytes each on GPU `gpu`; for the sm engine
  // also `slots` entry arrays of max_packets PlacementEntry in mapped pinned host memory.
  // Throws Error.
  Stager(int gpu, uint32_t slots, uint32_t max_packets, uint32_t in_bytes,
         StagerEngine engine = StagerEngine::sm);
  ~Stager();
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  // Enqueues on `stream` the gather of srcs[0..count) (in_bytes each) into slot's buffer,
  // packed: packet i lands at slot_base(slot) + i * in_bytes. count <= max_packets. Never
  // throws or allocates; returns the CUDA error (cudaSuccess).
  //
  // Sources: sm engine: device-accessible memory (device memory, or pinned host memory:
  // cudaHostAlloc / cudaHostRegister, which UVA maps at the same address); pageable memory
  // needs copy_engine. Both engines read the sources in stream order, so they must stay
  // valid and unchanged until the work queued here has run.
  //
  // Slot reuse contract (sm engine): stage() writes the slot's entry array on the host
  // immediately, and the kernel reads it when it runs. So stage(slot, ...) must not be
  // called again for a slot while an earlier stage() of that slot may still be queued or
  // running: reuse a slot only after work queued after its previous stage() was seen
  // complete (an event, as the FramePipeline does with each job's slot). The slot's device
  // buffer has the same rule in both engines (it is overwritten). Not thread-safe per
  // Stager: stage() of different slots from different threads is fine for sm, not for
  // copy_engine (shared scratch).
  cudaError_t stage(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;

  std::byte* slot_base(uint32_t slot) const noexcept;
  uint32_t slots() const noexcept { return slots_; }
  uint32_t max_packets() const noexcept { return max_packets_; }
  uint32_t in_bytes() const noexcept { return in_bytes_; }
  StagerEngine engine() const noexcept { return engine_; }

 private:
  cudaError_t stage_sm(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;
  cudaError_t stage_copy(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;

  uint32_t slots_, max_packets_, in_bytes_;
  StagerEngine engine_;
  uint32_t max_grid_ = 1;             // place_max_grid(gpu), sm engine
  std::byte* device_ = nullptr;       // slots * max_packets * in_bytes
  PlacementEntry* entries_ = nullptr; // sm: slots * max_packets, mapped pinned (host address)
  const PlacementEntry* entries_dev_ = nullptr;  // the same, as the GPU addresses it
  void** dsts_ = nullptr;             // copy_engine: scratch for the batched copy call (host)
  size_t* sizes_ = nullptr;
};

}  // namespace netdaq::gpu
