// The live samples of a traffic run: every stats interval, rates since the previous sample
// (from the session's queue counters) and the receivers' running loss counts.
#pragma once

#include <cstdint>

#include "netdaq/netdaq.h"
#include "traffic.h"
#include "traffic_plan.h"

namespace netdaq::cli {

class LiveSampler {
 public:
  LiveSampler(Session& session, const Workers& w, uint32_t interval_ms, uint64_t t0) noexcept;
  // Hands live a sample when the interval is up.
  void tick(uint64_t now, const LiveCallback& live);

 private:
  void add_rates(LiveSample& ls, double dt);
  void add_receiver_counts(LiveSample& ls) const noexcept;

  Session& session_;
  const Workers& w_;
  const uint64_t interval_ns_;
  const uint64_t t0_;
  uint64_t next_tick_, last_tick_;
  uint64_t prev_rx_p_ = 0, prev_rx_b_ = 0, prev_tx_p_ = 0, prev_tx_b_ = 0;
};

}  // namespace netdaq::cli
