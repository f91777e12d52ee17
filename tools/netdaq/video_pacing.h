// video-send's pacing helpers: waiting for a packet's departure time (ST 2110-21's schedule,
// sensors::St2110Timing) and the statistics of how late packets left. The socket engine has no
// SO_TXTIME, so the sender itself waits: clock_nanosleep to just before the deadline (the
// kernel wakes a sleeper tens of microseconds late on a VM), then a bounded spin on the clock.
#pragma once

#include <time.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "video_sender.h"

namespace netdaq::cli {

// CLOCK_MONOTONIC in ns (payload_clock_ns's clock, the one clock_nanosleep takes).
inline uint64_t mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

inline uint64_t clock_ns(clockid_t id) noexcept {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// video-send --epoch tai: ST 2110-10 counts frame periods and RTP time from the SMPTE epoch
// (1970-01-01 00:00:00 TAI), read here on CLOCK_TAI (what ptp4l + phc2sys, or chrony, keep in
// step with PTP; without them it is the system clock plus the kernel's TAI offset).
struct TaiStart {
  uint64_t epoch_frame = 0;        // RTP frame (field) index of the first frame since the epoch
  uint64_t mono_ns = 0;            // where its period starts on CLOCK_MONOTONIC
  int64_t tai_minus_utc_s = 0;     // CLOCK_TAI - CLOCK_REALTIME, whole seconds: 37 when the offset is set, else 0
};

// The first period at least lead_ns from now (a whole video frame: field 0 when interlaced).
inline TaiStart tai_aligned_start(const sensors::St2110Timing& t, uint32_t fields, uint64_t lead_ns) noexcept {
  const uint64_t m0 = mono_ns(), tai = clock_ns(CLOCK_TAI), m1 = mono_ns();
  const uint64_t rt = clock_ns(CLOCK_REALTIME), tai2 = clock_ns(CLOCK_TAI);
  __extension__ using U128 = unsigned __int128;
  // k = ceil((tai + lead) / T): T = period_num / period_den ns exactly (59.94 included)
  uint64_t k = static_cast<uint64_t>((U128(tai + lead_ns) * t.period_den + t.period_num - 1) / t.period_num);
  if (fields == 2 && k % 2) ++k;
  TaiStart s;
  s.epoch_frame = k;
  s.mono_ns = m0 + (m1 - m0) / 2 + (t.frame_start_ns(k) - tai);
  s.tai_minus_utc_s = static_cast<int64_t>((int64_t(tai2 - rt) + 500'000'000) / 1'000'000'000);
  return s;
}

// Returns at deadline_ns or just after: sleeps while more than spin_ns are left, spins the rest.
// Bounded: the spin ends at the deadline, a sleep ends at deadline - spin_ns or on a signal.
inline uint64_t wait_until(uint64_t deadline_ns, uint64_t spin_ns) noexcept {
  uint64_t now = mono_ns();
  if (deadline_ns > now + spin_ns) {
    const uint64_t wake = deadline_ns - spin_ns;
    timespec ts{static_cast<time_t>(wake / 1'000'000'000ull), static_cast<long>(wake % 1'000'000'000ull)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    now = mono_ns();
  }
  while (now < deadline_ns) now = mono_ns();
  return now;
}

// How late packets were handed to the engine after their departure time: count, mean, max
// and a log2 histogram (bucket i: [2^i, 2^(i+1)) ns; bucket 0 also holds 0). No allocation.
class LatenessStats {
 public:
  void add(uint64_t late_ns, uint64_t packets) noexcept {
    count_ += packets;
    sum_ += late_ns * packets;
    max_ = std::max(max_, late_ns);
    unsigned b = 0;
    while (b + 1 < kBuckets && (late_ns >> (b + 1)) != 0) ++b;
    hist_[b] += packets;
  }
  uint64_t count() const noexcept { return count_; }
  double mean_ns() const noexcept { return count_ ? double(sum_) / double(count_) : 0; }
  uint64_t max_ns() const noexcept { return max_; }
  // Upper bound (2^(i+1) ns) of the bucket holding the q-quantile.
  uint64_t quantile_bound_ns(double q) const noexcept {
    const double want = q * double(count_);
    uint64_t seen = 0;
    for (unsigned b = 0; b < kBuckets; ++b) {
      seen += hist_[b];
      if (double(seen) >= want && seen) return uint64_t{2} << b;
    }
    return 0;
  }
  static constexpr unsigned kBuckets = 40;
  const std::array<uint64_t, kBuckets>& histogram() const noexcept { return hist_; }

 private:
  uint64_t count_ = 0, sum_ = 0, max_ = 0;
  std::array<uint64_t, kBuckets> hist_{};
};

}  // namespace netdaq::cli
