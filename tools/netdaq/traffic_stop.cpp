#include "traffic_stop.h"

#include <algorithm>

namespace netdaq::cli {

namespace {
// Without a packet for this long, receivers that got everything sent have nothing in flight.
constexpr uint64_t kQuietNs = 20'000'000;
}  // namespace

StopPolicy::StopPolicy(const TrafficOptions& opt, uint64_t deadline_ns, const Workers& w) noexcept
    : opt_(opt), deadline_ns_(deadline_ns), w_(w) {
  for (auto c : opt.rx_expected) rx_expected_total_ += c;
}

bool StopPolicy::over(uint64_t now, bool interrupted) noexcept {
  return w_.senders.empty() ? receivers_done(now, interrupted) : drained(now);
}

bool StopPolicy::drained(uint64_t now) noexcept {
  if (!drain_start_ && w_.senders_done()) drain_start_ = now;
  if (!drain_start_) return false;
  if (w_.receivers.empty()) return true;
  const uint64_t sent = w_.sent();
  const uint64_t last_rx = w_.rx_last_ns();
  const bool quiet = now > last_rx + kQuietNs;
  // drain_ms after the senders stopped or after the last packet, whichever is later: a slow
  // link (RDMA under emulation: 64 KB messages at tens of MB/s) still delivers what a reliable
  // engine took, and that is not loss.
  const uint64_t since = std::max(drain_start_, last_rx);
  return now - std::min(now, since) >= uint64_t{opt_.drain_ms} * 1'000'000 || (w_.rx_unique() >= sent && quiet);
}

bool StopPolicy::receivers_done(uint64_t now, bool interrupted) const noexcept {
  if (interrupted) return true;
  if (deadline_ns_ && now >= deadline_ns_) return true;
  if (w_.rx_finished()) return true;  // replayed files read to their end
  if (rx_expected_total_ && w_.rx_unique() >= rx_expected_total_) return true;
  const uint64_t last_rx = w_.rx_last_ns();
  return opt_.idle_timeout_s > 0 && last_rx && now > last_rx + static_cast<uint64_t>(opt_.idle_timeout_s * 1e9);
}

}  // namespace netdaq::cli
