// The idle back-off of every polling loop of the CLI (senders, receivers, capture): retry at
// once a few times (a poll is a syscall in direct mode), then sleep in short steps so that a
// sender and a receiver can share the cores of a small box. No sched_yield(): on a CPU shared
// with a busy process it hands that process a whole time slice (milliseconds), while a short
// sleep gets the CPU back on wake-up.
#pragma once

#include <time.h>

#include <cstdint>

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
    ++empty_;
    if (busy_ || empty_ < kSpins) return;
    sleep_us(empty_ < kShortSleeps ? 10 : 50);
  }
  // After one that got something.
  void reset() noexcept { empty_ = 0; }

 private:
  static constexpr uint32_t kSpins = 16;         // empty polls retried at once
  static constexpr uint32_t kShortSleeps = 512;  // then 10 µs sleeps up to here, then 50 µs
  uint32_t empty_ = 0;
  bool busy_;
};

}  // namespace netdaq::cli
