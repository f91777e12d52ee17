// PublishedPipelineStats: a PipelineStats (only uint64_t fields) as relaxed atomics.
#include <bit>
#include <type_traits>

#include "netdaq/metrics.h"

namespace netdaq {

namespace {
using Fields = std::array<uint64_t, PublishedPipelineStats::kFields>;
static_assert(sizeof(gpu::PipelineStats) == sizeof(Fields), "PipelineStats holds only uint64_t counters");
static_assert(std::is_trivially_copyable_v<gpu::PipelineStats>);
}  // namespace

void PublishedPipelineStats::publish(const gpu::PipelineStats& s) noexcept {
  const auto f = std::bit_cast<Fields>(s);
  for (size_t i = 0; i < kFields; ++i) v_[i].store(f[i], std::memory_order_relaxed);
}

gpu::PipelineStats PublishedPipelineStats::load() const noexcept {
  Fields f;
  for (size_t i = 0; i < kFields; ++i) f[i] = v_[i].load(std::memory_order_relaxed);
  return std::bit_cast<gpu::PipelineStats>(f);
}

}  // namespace netdaq
