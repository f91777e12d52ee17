// Send-to-receive latency of a stream, kept as a histogram so that percentiles cost no memory
// per packet.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

namespace netdaq::cli {

// Log-linear latency histogram (16 sub-buckets per power of two: ~6% resolution).
struct LatencyHistogram {
  static constexpr unsigned kSub = 16;
  std::array<uint64_t, 64 * kSub> counts{};
  uint64_t n = 0;
  uint64_t sum = 0;
  uint64_t min = std::numeric_limits<uint64_t>::max();
  uint64_t max = 0;

  void add(uint64_t ns) noexcept;
  void merge(const LatencyHistogram& o) noexcept;
  uint64_t percentile(double p) const noexcept;  // p in [0, 100]; 0 when empty
};

}  // namespace netdaq::cli
