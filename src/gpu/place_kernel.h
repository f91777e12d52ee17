// The kernel that runs one PlaceJob per launch (per_burst and graph executors share it).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "gpu/place_job.h"

namespace netdaq::gpu {

constexpr uint32_t kPlaceThreads = 256;  // threads per block; a block places one entry at a time

// __global__ void(const PlaceJob, std::byte* stage): the address a graph kernel node or
// cudaLaunchKernel needs.
const void* place_kernel() noexcept;

// Blocks for a job of `count` entries: one per entry up to max_grid (a few waves of the GPU),
// at least 1 so an empty job still runs and completes in order.
constexpr uint32_t place_grid(uint32_t count, uint32_t max_grid) noexcept {
  return std::max(1u, std::min(count, max_grid));
}

// max_grid for GPU `gpu`: 8 blocks per SM. Throws Error.
uint32_t place_max_grid(int gpu);

// Queues the job on `stream`; returns the launch error (never throws). stage (device
// memory, 16-byte aligned): a staged launch, which first gathers every entry with a stage
// index into its place there (staged_at), then places from it.
cudaError_t launch_place(const PlaceJob& job, uint32_t grid, cudaStream_t stream, std::byte* stage = nullptr) noexcept;

}  // namespace netdaq::gpu
