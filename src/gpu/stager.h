// Staged delivery for packets the NIC cannot write into GPU memory (socket, afxdp, dpdk
// without GPUDirect): a burst's packets, in pinned host buffers scattered over a pool, are
// gathered into a packed device staging buffer. One staging buffer per job slot, so receive
// goes on while the previous batch is still being moved. A standalone component (tests,
// gpu_throughput): the FramePipeline stages inside its jobs' own launch instead
// (launch_place's stage), one host call per job rather than this class's four.
//
// Two engines (bench/gpu/README.md has the figures):
//   sm (default)  the place kernel (launch_place, raw -> raw) reads the packets over PCIe
//                 itself: one kernel launch per burst; the SMs keep thousands of small reads
//                 in flight, where the copy engines pay a fixed cost per copy.
//   copy_engine   one cudaMemcpyBatchAsync per burst (packets adjacent in the pool merged).
//
// Overlap: by default the gather runs on the Stager's own streams (StagerOptions::streams,
// slot k on stream k % streams), and the caller's stream waits for it through an event. So
// the gathers of consecutive bursts run concurrently (one kernel's ramp-up and tail overlap
// the next one's transfer) while the work the caller queues after stage() (the placement
// job) stays in order and sees the data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/place_job.h"

namespace netdaq::gpu {

enum class StagerEngine : uint8_t { sm, copy_engine };

// Where the sm engine's gather kernel reads its entry list (16 B per packet) from.
//   mapped  mapped pinned host memory, written by stage(): no extra copy, but each block's
//           first read of an entry is a dependent PCIe round trip (kernel ramp-up).
//   device  device memory: stage() writes a pinned host array and queues one
//           cudaMemcpyAsync (16 B x count, H2D) before the kernel on the same stream; the
//           kernel's entry reads then hit HBM/L2. Costs one more API call per burst.
enum class StagerEntries : uint8_t { mapped, device };

struct StagerOptions {
  StagerEngine engine = StagerEngine::sm;
  StagerEntries entries = StagerEntries::mapped;  // sm engine only
  // Own non-blocking streams for the gathers (clamped to the slot count); 0 = queue the
  // gather on the caller's stream itself (no overlap between bursts, no events).
  uint32_t streams = 4;
};

class Stager {
 public:
  // `slots` device buffers of max_packets * in_bytes each on GPU `gpu`; for the sm engine
  // also `slots` entry arrays of max_packets PlacementEntry (mapped pinned host memory, or
  // pinned host + device memory for StagerEntries::device); opts.streams streams and one
  // event per slot. Throws Error.
  Stager(int gpu, uint32_t slots, uint32_t max_packets, uint32_t in_bytes, StagerOptions opts = {});
  Stager(int gpu, uint32_t slots, uint32_t max_packets, uint32_t in_bytes, StagerEngine engine)
      : Stager(gpu, slots, max_packets, in_bytes, StagerOptions{engine}) {}
  ~Stager();
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  // Gathers srcs[0..count) (in_bytes each) into slot's buffer, packed: packet i lands at
  // slot_base(slot) + i * in_bytes. count <= max_packets. Never throws or allocates; returns
  // the CUDA error (cudaSuccess).
  //
  // Ordering (own streams, the default): the gather is queued on the slot's stream and does
  // NOT wait for work queued earlier on `stream`; `stream` is made to wait for the gather
  // (cudaEventRecord + cudaStreamWaitEvent), so work queued on `stream` after stage()
  // sees the packed data, and synchronizing `stream` covers the gather. Hence:
  //   - sources must be ready when stage() is called (written by the host or the NIC, or
  //     device memory whose writer has completed), and stay valid and unchanged until work
  //     queued on `stream` after stage() has run;
  //   - with opts.streams == 0 the gather is queued on `stream` itself and reads the
  //     sources in stream order, as before.
  //
  // Sources: sm engine: device-accessible memory (device memory, or pinned host memory:
  // cudaHostAlloc / cudaHostRegister, which UVA maps at the same address); pageable memory
  // needs copy_engine.
  //
  // Slot reuse contract (both engines): stage() writes the slot's entry array on the host
  // immediately and the GPU reads it later, and the slot's device buffer is overwritten
  // without waiting for earlier readers of it. So stage(slot, ...) must not be called again
  // for a slot until work queued on `stream` after its previous stage() (the job reading
  // the slot) was seen complete (an event, as the FramePipeline does with each job's slot).
  // Under that contract no GPU-side wait for slot reuse is needed, and none is queued.
  // Not thread-safe per Stager: stage() of different slots from different threads is fine
  // for sm, not for copy_engine (shared scratch).
  cudaError_t stage(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;

  std::byte* slot_base(uint32_t slot) const noexcept;
  uint32_t slots() const noexcept { return slots_; }
  uint32_t max_packets() const noexcept { return max_packets_; }
  uint32_t in_bytes() const noexcept { return in_bytes_; }
  StagerEngine engine() const noexcept { return opts_.engine; }
  StagerEntries entries() const noexcept { return opts_.entries; }
  uint32_t streams() const noexcept { return static_cast<uint32_t>(streams_.size()); }  // own streams
  const StagerOptions& options() const noexcept { return opts_; }

 private:
  void init(int gpu);
  void release() noexcept;
  cudaError_t stage_sm(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;
  cudaError_t stage_copy(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept;

  uint32_t slots_, max_packets_, in_bytes_;
  StagerOptions opts_;
  uint32_t max_grid_ = 1;             // place_max_grid(gpu), sm engine
  std::byte* device_ = nullptr;       // slots * max_packets * in_bytes
  PlacementEntry* entries_ = nullptr; // sm: slots * max_packets, pinned host (written by stage())
  const PlacementEntry* entries_dev_ = nullptr;  // what the kernel reads: the mapped alias of
                                                 // entries_, or device memory (entries device)
  PlacementEntry* entries_copy_ = nullptr;       // entries device: the device array (owned)
  void** dsts_ = nullptr;             // copy_engine: scratch for the batched copy call (host)
  size_t* sizes_ = nullptr;
  std::vector<cudaStream_t> streams_;  // own streams (empty: the caller's stream)
  std::vector<cudaEvent_t> staged_;    // per slot: recorded after the gather, waited by the caller
};

}  // namespace netdaq::gpu
