// PublishedPipelineStats: a PipelineStats (only uint64_t fields) as relaxed atomics, and up to
// stream_capacity StreamStats (the same) with a count stored last (release), so that a load
// (acquire) never reads an entry whose stream key was not yet written.
#include <algorithm>
#include <bit>
#include <type_traits>

#include "netdaq/metrics.h"

namespace netdaq {

namespace {
using Fields = std::array<uint64_t, PublishedPipelineStats::kFields>;
using StreamFields = std::array<uint64_t, PublishedPipelineStats::kStreamFields>;
static_assert(sizeof(gpu::PipelineStats) == sizeof(Fields), "PipelineStats holds only uint64_t counters");
static_assert(std::is_trivially_copyable_v<gpu::PipelineStats>);
static_assert(sizeof(gpu::StreamStats) == sizeof(StreamFields), "StreamStats holds only uint64_t fields");
static_assert(std::is_trivially_copyable_v<gpu::StreamStats>);
}  // namespace

PublishedPipelineStats::PublishedPipelineStats(size_t stream_capacity)
    : stream_capacity_(stream_capacity),
      s_(stream_capacity ? new std::atomic<uint64_t>[stream_capacity * kStreamFields]() : nullptr) {}

void PublishedPipelineStats::publish(const gpu::PipelineStats& s) noexcept {
  const auto f = std::bit_cast<Fields>(s);
  for (size_t i = 0; i < kFields; ++i) v_[i].store(f[i], std::memory_order_relaxed);
}

void PublishedPipelineStats::publish(const gpu::PipelineStats& s, std::span<const gpu::StreamStats> streams) noexcept {
  publish(s);
  const size_t n = std::min(streams.size(), stream_capacity_);
  for (size_t k = 0; k < n; ++k) {
    const auto f = std::bit_cast<StreamFields>(streams[k]);
    std::atomic<uint64_t>* at = &s_[k * kStreamFields];
    for (size_t i = 0; i < kStreamFields; ++i) at[i].store(f[i], std::memory_order_relaxed);
  }
  // Entries [0, n) are written (their keys above all) before a load can count them.
  streams_.store(n, std::memory_order_release);
}

gpu::PipelineStats PublishedPipelineStats::load() const noexcept {
  Fields f;
  for (size_t i = 0; i < kFields; ++i) f[i] = v_[i].load(std::memory_order_relaxed);
  return std::bit_cast<gpu::PipelineStats>(f);
}

std::vector<gpu::StreamStats> PublishedPipelineStats::load_streams() const {
  const size_t n = streams_.load(std::memory_order_acquire);
  std::vector<gpu::StreamStats> out;
  out.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    StreamFields f;
    const std::atomic<uint64_t>* at = &s_[k * kStreamFields];
    for (size_t i = 0; i < kStreamFields; ++i) f[i] = at[i].load(std::memory_order_relaxed);
    out.push_back(std::bit_cast<gpu::StreamStats>(f));
  }
  return out;
}

}  // namespace netdaq
