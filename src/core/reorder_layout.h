// Where an rx.reorder's fields lie in a queue's buffers and how the GPU reaches the samples.
// Shared by the validator and gpu::FramePipeline, so the rules live in one place.
#pragma once

#include <algorithm>
#include <cstdint>

#include "netdaq/config.h"

namespace netdaq::detail {

// The region holding bytes [offset, offset + n) of the queue's packets (segments in
// memory_regions order), or null when they are not inside one segment or a region is unknown.
const MemoryRegionConfig* segment_region(const Config& cfg, const QueueConfig& q, uint64_t offset, uint64_t n);

// The GPU reads packets in place: staging direct, or automatic with samples in device memory.
inline bool reads_in_place(Staging staging, const MemoryRegionConfig* samples) noexcept {
  return staging == Staging::direct ||
         (staging == Staging::automatic && samples && samples->kind == MemoryKind::device);
}

// Packets a GPU job gathers before it goes (0: one job per burst); job_packets auto:
// kAutoJobPackets, so bursts that big or bigger go alone.
inline uint32_t job_packets_of(const ReorderConfig& g) noexcept { return g.job_packets.value_or(kAutoJobPackets); }

// Bursts one GPU job may gather: a job goes once it holds job_packets, or when it has its
// share of half the queue's bursts (ring_depth; 0: unknown), the rest keeping the receive
// going: an application that waits for a burst before it asks for frames would wait forever.
inline uint32_t bursts_per_job(const ReorderConfig& g, uint32_t ring_depth) noexcept {
  const uint32_t most = std::max(job_packets_of(g), 1u);
  if (!ring_depth) return most;
  return std::clamp(ring_depth / (2 * std::max(g.bursts_in_flight, 1u)), 1u, most);
}

// Buffers one GPU job in flight holds at most (the pool budget): the packets it gathered
// (fewer than job_packets) plus the burst that completed it, in at most bursts_per_job bursts.
inline uint64_t buffers_per_job(const ReorderConfig& g, uint32_t batch_size, uint32_t ring_depth) noexcept {
  return std::min<uint64_t>(uint64_t{batch_size} + job_packets_of(g), uint64_t{bursts_per_job(g, ring_depth)} * batch_size);
}

}  // namespace netdaq::detail
