#include "core/pacer.h"

#include <time.h>

#include <algorithm>

namespace netdaq::detail {

uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

Pacer::Pacer(double rate_mbps, double rate_pps, uint32_t burst_packets) {
  // The bucket holds a burst of jumbo datagrams or kCreditNs of traffic, whichever is more,
  // so a sender that stalls briefly (a preemption, a full socket buffer) catches up instead
  // of falling short of the rate for good.
  constexpr double kCreditNs = 2e6;
  if (rate_mbps > 0) {
    enabled_ = per_byte_ = true;
    tokens_per_ns_ = rate_mbps * 1e6 / 1e9;  // bits per ns
    max_tokens_ = std::max(std::max<double>(burst_packets, 1) * 9000 * 8, tokens_per_ns_ * kCreditNs);
  } else if (rate_pps > 0) {
    enabled_ = true;
    tokens_per_ns_ = rate_pps / 1e9;
    max_tokens_ = std::max(std::max<double>(burst_packets, 1), tokens_per_ns_ * kCreditNs);
  }
  tokens_ = max_tokens_;
}

void Pacer::refill(uint64_t now_ns) noexcept {
  if (last_ns_ == 0) last_ns_ = now_ns;
  if (now_ns > last_ns_) {
    tokens_ = std::min(max_tokens_, tokens_ + double(now_ns - last_ns_) * tokens_per_ns_);
    last_ns_ = now_ns;
  }
}

uint32_t Pacer::admit(const uint32_t* sizes, uint32_t n, uint64_t now_ns) noexcept {
  if (!enabled_) return n;
  refill(now_ns);
  uint32_t i = 0;
  for (; i < n; ++i) {
    const double c = cost(sizes[i]);
    if (tokens_ < c) break;
    tokens_ -= c;
  }
  return i;
}

void Pacer::refund(const uint32_t* sizes, uint32_t n) noexcept {
  for (uint32_t i = 0; i < n; ++i) tokens_ += cost(sizes[i]);
  tokens_ = std::min(tokens_, max_tokens_);
}

uint64_t Pacer::wait_ns(uint32_t size, uint64_t now_ns) noexcept {
  if (!enabled_) return 0;
  refill(now_ns);
  const double missing = cost(size) - tokens_;
  return missing <= 0 ? 0 : uint64_t(missing / tokens_per_ns_) + 1;
}

}  // namespace netdaq::detail
