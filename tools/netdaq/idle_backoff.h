// The idle back-off of every polling loop of the CLI (senders, receivers, capture): retry at
// once for kSpinNs, then sleep in short steps so that a sender and a receiver can share the
// cores of a small box. The spin is timed, not counted: a worker-mode poll is a ring check of
// a few ns, and a worker fills its next burst in about a microsecond at line rate; after 16
// empty polls a sleep (50 us or more on a VM) let the worker's ring overflow. No sched_yield(): on a CPU shared
// with a busy process it hands that process a whole time slice (milliseconds), while a short
// sleep gets the CPU back on wake-up.
#pragma once

#include <time.h>

#include <cstdint>

#include "netdaq/payload.h"

namespace netdaq::cli {

inline void sleep_us(uint32_t us) noexcept {
  timespec ts{0, static_cast<long>(us) * 1000};
  nanosleep(&ts, nullptr);
}

class IdleBackoff {
 public:
  // busy: never sleep (a core of its own per thread, as a latency-bound DAQ runs; bench
  // --busy-poll), so a packet is seen as soon as it lands.
  explicit IdleBackoff(bool busy = false) noexcept : busy_(busy) {}
  // After a poll (or send) that got nothing.
  void wait() noexcept {
    if (busy_) return;
    ++empty_;
    if (!sleeping_) {
      // The clock every kClockEvery empty polls: reading it (tens of ns on a VM) would cost
      // more than the poll.
      if (empty_ % kClockEvery != 0) return;
      const uint64_t now = payload_clock_ns();
      if (empty_ == kClockEvery) idle_since_ = now;
      if (now - idle_since_ < kSpinNs) return;
      sleeping_ = true;
      empty_ = 0;
    }
    sleep_us(empty_ < kShortSleeps ? 10 : 50);
  }
  // After one that got something.
  void reset() noexcept {
    empty_ = 0;
    sleeping_ = false;
  }

 private:
  static constexpr uint64_t kSpinNs = 100'000;  // empty polls retried at once for this long
  static constexpr uint32_t kClockEvery = 64;
  static constexpr uint32_t kShortSleeps = 512;  // then 10 µs sleeps up to here, then 50 µs
  uint32_t empty_ = 0;
  uint64_t idle_since_ = 0;
  bool sleeping_ = false;
  bool busy_;
};

}  // namespace netdaq::cli
