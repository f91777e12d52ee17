#include "latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cstddef>

namespace netdaq::cli {

namespace {
unsigned bucket_of(uint64_t v) noexcept {
  if (v < LatencyHistogram::kSub) return static_cast<unsigned>(v);
  const unsigned lg = 63u - static_cast<unsigned>(std::countl_zero(v));  // >= 4
  const unsigned sub = static_cast<unsigned>(v >> (lg - 4)) & (LatencyHistogram::kSub - 1);
  return (lg - 3) * LatencyHistogram::kSub + sub;
}
uint64_t bucket_low(unsigned b) noexcept {
  if (b < LatencyHistogram::kSub) return b;
  const unsigned lg = b / LatencyHistogram::kSub + 3;
  const uint64_t sub = b % LatencyHistogram::kSub;
  return (uint64_t{1} << lg) | (sub << (lg - 4));
}
}  // namespace

void LatencyHistogram::add(uint64_t ns) noexcept {
  ++counts[std::min<unsigned>(bucket_of(ns), counts.size() - 1)];
  ++n;
  sum += ns;
  min = std::min(min, ns);
  max = std::max(max, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
  n += o.n;
  sum += o.sum;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

uint64_t LatencyHistogram::percentile(double p) const noexcept {
  if (n == 0) return 0;
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(p / 100.0 * static_cast<double>(n) + 0.5));
  uint64_t acc = 0;
  for (unsigned b = 0; b < counts.size(); ++b) {
    acc += counts[b];
    if (acc >= rank) return std::clamp(bucket_low(b), min, max);
  }
  return max;
}

}  // namespace netdaq::cli
