// Where an rx.reorder's fields lie in a queue's buffers and how the GPU reaches the samples.
// Shared by the validator and gpu::FramePipeline, so the rules live in one place.
#pragma once

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

// Buffers one job in flight holds at most beyond the burst that completes it (the pool budget).
inline uint32_t gathered_packets(const ReorderConfig& g, uint32_t batch_size) noexcept {
  return !g.job_packets && batch_size >= kAutoJobPackets ? 0 : job_packets_of(g);
}

}  // namespace netdaq::detail
