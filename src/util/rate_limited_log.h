// Logging from poll and transmit paths: an error that repeats per packet must neither flood
// the log nor slow the path down. At most one line per interval gets through; the rest are
// only counted, with two relaxed atomics (no allocation, no lock, no formatting).
#pragma once

#include <atomic>
#include <cstdint>

namespace netdaq::detail {

class RateLimitedLog {
 public:
  static constexpr uint64_t kOnce = UINT64_MAX;  // an interval that never ends: log the first only

  explicit RateLimitedLog(uint64_t interval_ns = 1'000'000'000) noexcept : interval_ns_(interval_ns) {}

  // True when this occurrence should be logged; *suppressed = occurrences not logged since
  // the last logged one. now_ns: a steady clock (the first form reads it).
  bool should_log(uint64_t* suppressed) noexcept;
  bool should_log(uint64_t* suppressed, uint64_t now_ns) noexcept;

  // Calls log_line(suppressed) when this occurrence should be logged. Format inside
  // log_line, never before the call, so a suppressed occurrence costs nothing; whatever
  // log_line throws is swallowed (hot paths are noexcept).
  template <class F>
  void log(F&& log_line) noexcept {
    uint64_t suppressed = 0;
    if (!should_log(&suppressed)) return;
    try {
      log_line(suppressed);
    } catch (...) {
    }
  }

 private:
  uint64_t interval_ns_;
  std::atomic<uint64_t> next_ns_{0};
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace netdaq::detail
