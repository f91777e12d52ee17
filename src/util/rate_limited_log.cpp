#include "util/rate_limited_log.h"

#include <chrono>

namespace netdaq::detail {

bool RateLimitedLog::should_log(uint64_t* suppressed) noexcept {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();  // vDSO: no syscall
  return should_log(suppressed, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
}

bool RateLimitedLog::should_log(uint64_t* suppressed, uint64_t now_ns) noexcept {
  uint64_t next = next_ns_.load(std::memory_order_relaxed);
  // Saturating: kOnce (or a clock near its end) leaves next at UINT64_MAX, which now never reaches.
  const uint64_t after = interval_ns_ > UINT64_MAX - now_ns ? UINT64_MAX : now_ns + interval_ns_;
  // One thread wins the compare-exchange and logs; the others count themselves suppressed.
  if (now_ns >= next && next_ns_.compare_exchange_strong(next, after, std::memory_order_relaxed)) {
    *suppressed = suppressed_.exchange(0, std::memory_order_relaxed);
    return true;
  }
  suppressed_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

}  // namespace netdaq::detail
