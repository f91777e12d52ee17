#include "live_sampler.h"

#include <algorithm>

namespace netdaq::cli {

LiveSampler::LiveSampler(Session& session, const Workers& w, uint32_t interval_ms, uint64_t t0) noexcept
    : session_(session),
      w_(w),
      interval_ns_(uint64_t{std::max<uint32_t>(interval_ms, 10)} * 1'000'000),  // at most 100 lines a second
      t0_(t0),
      next_tick_(t0 + interval_ns_),
      last_tick_(t0) {}

void LiveSampler::tick(uint64_t now, const LiveCallback& live) {
  if (now < next_tick_) return;
  LiveSample ls;
  ls.t = double(now - t0_) / 1e9;
  add_rates(ls, double(now - last_tick_) / 1e9);
  add_receiver_counts(ls);
  live(ls);
  last_tick_ = now;
  next_tick_ += interval_ns_;
  if (next_tick_ <= now) next_tick_ = now + interval_ns_;  // a slow callback: skip, do not catch up
}

void LiveSampler::add_rates(LiveSample& ls, double dt) {
  uint64_t rxp = 0, rxb = 0, txp = 0, txb = 0;
  for (const auto& s : session_.stats()) {
    (s.is_rx ? rxp : txp) += s.packets;
    (s.is_rx ? rxb : txb) += s.bytes;
    ls.drops += drops_except_tx_full(s);
    for (size_t i = 0; i < kDropReasons; ++i) ls.drops_by_reason[i] += s.drops[i];
    (s.is_rx ? ls.rx_pool_in_use : ls.tx_pool_in_use) += s.pool_in_use;
  }
  for (auto& r : w_.receivers)  // launch: rings: the packets went by in the rings' owner
    if (r->rings) {
      const uint64_t taken = r->pub_taken.load(std::memory_order_relaxed);
      rxp += taken;
      rxb += taken * r->ring_packet_bytes;
    }
  ls.rx_packets = rxp;
  ls.tx_packets = txp;
  ls.rx_pps = double(rxp - prev_rx_p_) / dt;
  ls.rx_gbps = double(rxb - prev_rx_b_) * 8 / dt / 1e9;
  ls.tx_pps = double(txp - prev_tx_p_) / dt;
  ls.tx_gbps = double(txb - prev_tx_b_) * 8 / dt / 1e9;
  prev_rx_p_ = rxp, prev_rx_b_ = rxb, prev_tx_p_ = txp, prev_tx_b_ = txb;
}

void LiveSampler::add_receiver_counts(LiveSample& ls) const noexcept {
  for (auto& r : w_.receivers) {
    ls.reordered += r->pub_reordered.load(std::memory_order_relaxed);
    ls.lost += r->pub_lost.load(std::memory_order_relaxed);
    ls.duplicates += r->pub_dups.load(std::memory_order_relaxed);
    ls.malformed += r->pub_malformed.load(std::memory_order_relaxed);
  }
}

}  // namespace netdaq::cli
