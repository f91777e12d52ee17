// Pool sizing: every pool must hold the buffers all its queues can keep at once
// (core/pool_budget.h), or the queues can deadlock waiting for each other's buffers.
#include "core/config_check.h"
#include "core/pool_budget.h"

namespace netdaq::detail {

namespace {

// "sensor0/rx0 (rx worker: (ring_depth 64 + 1) x batch_size 64 = 4160)"
std::string describe(const PoolUser& u) {
  const QueueConfig& q = *u.queue;
  const bool extra = u.rx && q.mode == PollMode::worker;
  std::string s = queue_label(*u.iface, q, u.rx) + (u.rx ? std::string(" (rx ") + to_string(q.mode) + ": " : " (tx: ");
  s += extra ? "(ring_depth " + std::to_string(q.ring_depth) + " + 1)" : "ring_depth " + std::to_string(q.ring_depth);
  s += " x batch_size " + std::to_string(q.batch_size);
  if (u.gpu_buffers)
    s += " + " + std::to_string(u.gpu_buffers) + " held by the GPU (bursts_in_flight x (batch_size + job_packets))";
  if (u.engine_buffers) {
    const bool dpdk = u.iface->engine == "dpdk";
    s += " + " + std::to_string(u.engine_buffers);
    if (dpdk)
      s += u.rx ? " in the NIC's ring and the mempool cache (dpdk.rx_desc " + std::to_string(u.iface->dpdk.rx_desc) +
                      " + dpdk.mempool_cache " + std::to_string(u.iface->dpdk.mempool_cache) + ")"
                : std::string(" in flight (dpdk.tx_desc)");
    else
      s += u.rx ? " in the kernel (afxdp.fill_ring)" : " in flight (afxdp.tx_ring)";
  }
  return s + " = " + std::to_string(u.buffers) + ")";
}

// What to lower besides num_bufs to raise: the knobs the users' numbers come from.
std::string knobs(const PoolBudget& b) {
  bool fill = false, tx = false, rx_desc = false, tx_desc = false;
  for (const auto& u : b.users) {
    const bool dpdk = u.iface->engine == "dpdk";
    fill = fill || (u.rx && u.engine_buffers && !dpdk);
    tx = tx || (!u.rx && u.engine_buffers && !dpdk);
    rx_desc = rx_desc || (u.rx && u.engine_buffers && dpdk);
    tx_desc = tx_desc || (!u.rx && u.engine_buffers && dpdk);
  }
  return std::string("ring_depth / batch_size") + (fill ? " / afxdp.fill_ring" : "") + (tx ? " / afxdp.tx_ring" : "") +
         (rx_desc ? " / dpdk.rx_desc / dpdk.mempool_cache" : "") + (tx_desc ? " / dpdk.tx_desc" : "");
}

}  // namespace

void check_pool_budgets(Checker& c) {
  const auto budgets = pool_budgets(c.config());
  for (size_t i = 0; i < budgets.size(); ++i) {
    const PoolBudget& b = budgets[i];
    if (b.fits()) continue;
    std::vector<std::string> users;
    for (const auto& u : b.users) users.push_back(describe(u));
    c.error("memory_regions[" + std::to_string(i) + "].num_bufs", std::to_string(b.region->num_bufs),
            "pool '" + b.region->name + "' is too small: its queues can hold " + std::to_string(b.total) +
                " buffers at once: " + join(users) + "; num_bufs must be at least " + std::to_string(b.total) +
                " (or lower " + knobs(b) + ")");
  }
}

}  // namespace netdaq::detail
