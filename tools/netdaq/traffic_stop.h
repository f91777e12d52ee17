// When a traffic run is over. With senders: once they are all done and the drain is over
// (drain_ms, or every sent packet arrived and the receivers went quiet). Without senders
// (rx only): at Ctrl-C, the duration, the expected count, the idle timeout, or when every rx
// queue reads a finite source (a capture file) that has ended.
#pragma once

#include <cstdint>

#include "traffic.h"
#include "traffic_plan.h"

namespace netdaq::cli {

class StopPolicy {
 public:
  StopPolicy(const TrafficOptions& opt, uint64_t deadline_ns, const Workers& w) noexcept;
  // Asked by the controller every few ms; `interrupted`: Ctrl-C was seen.
  bool over(uint64_t now, bool interrupted) noexcept;

 private:
  bool drained(uint64_t now) noexcept;
  bool receivers_done(uint64_t now, bool interrupted) const noexcept;

  const TrafficOptions& opt_;
  const uint64_t deadline_ns_;  // 0: none
  const Workers& w_;
  uint64_t rx_expected_total_ = 0;
  uint64_t drain_start_ = 0;  // when the senders were first seen done (the drain runs drain_ms past it and past the last packet)
};

}  // namespace netdaq::cli
