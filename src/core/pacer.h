// Token-bucket pacing for TX queues: limits packets/s or bits/s without sleeping, so
// send() stays non-blocking (it accepts fewer packets and the caller retries).
#pragma once

#include <cstdint>

namespace netdaq::detail {

class Pacer {
 public:
  // rate_mbps or rate_pps (both 0: unpaced). burst_packets bounds how far ahead it lets a
  // sender run after being idle.
  Pacer(double rate_mbps, double rate_pps, uint32_t burst_packets);

  bool enabled() const noexcept { return enabled_; }
  // How many of these packets (with these sizes in bytes) may go now; takes their tokens.
  uint32_t admit(const uint32_t* sizes, uint32_t n, uint64_t now_ns) noexcept;
  // Gives back the tokens of packets admitted but not sent.
  void refund(const uint32_t* sizes, uint32_t n) noexcept;
  // Nanoseconds until the next packet of `size` bytes may go (0 = now).
  uint64_t wait_ns(uint32_t size, uint64_t now_ns) noexcept;

 private:
  void refill(uint64_t now_ns) noexcept;
  double cost(uint32_t size) const noexcept { return per_byte_ ? size * 8.0 : 1.0; }

  bool enabled_ = false;
  bool per_byte_ = false;      // tokens are bits (rate_mbps) or packets (rate_pps)
  double tokens_per_ns_ = 0;
  double tokens_ = 0;
  double max_tokens_ = 0;
  uint64_t last_ns_ = 0;
};

uint64_t monotonic_ns() noexcept;

}  // namespace netdaq::detail
