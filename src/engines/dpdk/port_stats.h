// Port-wide counters of the NIC (rte_eth_stats, xstats) mirrored into netdaq's drop reasons:
// imissed -> kernel (the NIC had no descriptor), rx_nombuf -> pool_empty, ierrors -> errors,
// oerrors -> tx_error. DPDK counts them per port, so they land on the port's first rx / tx
// queue; the raw values and every non-zero xstat are listed there too.
#pragma once

#include <atomic>
#include <mutex>

#include "core/counters.h"
#include "netdaq/stats.h"

namespace netdaq::detail::dpdk {

class PortStats {
 public:
  explicit PortStats(uint16_t port) noexcept : port_(port) {}
  void set_first_queues(QueueCounters* rx0, QueueCounters* tx0) noexcept { rx0_ = rx0, tx0_ = tx0; }
  void refresh() noexcept;
  void add_details(QueueStats& s, bool rx) const;

 private:
  uint16_t port_;
  QueueCounters* rx0_ = nullptr;
  QueueCounters* tx0_ = nullptr;
  mutable std::mutex mu_;
  std::atomic<uint64_t> seen_imissed_{0}, seen_nombuf_{0}, seen_oerrors_{0}, seen_ierrors_{0};
};

}  // namespace netdaq::detail::dpdk
