#include "engines/dpdk/port_stats.h"

#include <rte_ethdev.h>

#include <vector>

namespace netdaq::detail::dpdk {

void PortStats::refresh() noexcept {
  rte_eth_stats st{};
  if (rte_eth_stats_get(port_, &st) != 0) return;
  if (rx0_) {
    mirror_counter(seen_imissed_, st.imissed, *rx0_, DropReason::kernel);
    mirror_counter(seen_nombuf_, st.rx_nombuf, *rx0_, DropReason::pool_empty);
    const uint64_t old = seen_ierrors_.exchange(st.ierrors, std::memory_order_relaxed);
    if (st.ierrors > old) rx0_->errors.fetch_add(st.ierrors - old, std::memory_order_relaxed);
  }
  if (tx0_) mirror_counter(seen_oerrors_, st.oerrors, *tx0_, DropReason::tx_error);
}

void PortStats::add_details(QueueStats& s, bool rx) const {
  std::lock_guard lock(mu_);
  rte_eth_stats st{};
  if (rte_eth_stats_get(port_, &st) != 0) return;
  auto& c = s.engine_counters;
  if (rx) {
    c.emplace_back("port_ipackets", st.ipackets);
    c.emplace_back("port_imissed", st.imissed);
    c.emplace_back("port_rx_nombuf", st.rx_nombuf);
    c.emplace_back("port_ierrors", st.ierrors);
  } else {
    c.emplace_back("port_opackets", st.opackets);
    c.emplace_back("port_oerrors", st.oerrors);
  }
  const int n = rte_eth_xstats_get_names(port_, nullptr, 0);
  if (n <= 0) return;
  std::vector<rte_eth_xstat_name> names(static_cast<size_t>(n));
  std::vector<rte_eth_xstat> values(static_cast<size_t>(n));
  if (rte_eth_xstats_get_names(port_, names.data(), static_cast<unsigned>(n)) != n ||
      rte_eth_xstats_get(port_, values.data(), static_cast<unsigned>(n)) != n)
    return;
  for (const auto& v : values) {
    if (v.value == 0 || v.id >= names.size()) continue;
    const std::string name = names[v.id].name;
    const bool is_rx = name.rfind("rx_", 0) == 0;
    const bool is_tx = name.rfind("tx_", 0) == 0;
    if ((rx && is_tx) || (!rx && is_rx)) continue;
    c.emplace_back("xstat_" + name, v.value);
  }
}

}  // namespace netdaq::detail::dpdk
