// Pool sizing: every pool must hold the buffers all its queues can keep at once
// (core/pool_budget.h), or the queues can deadlock waiting for each other's buffers.
#include "core/config_check.h"
#include "core/pool_budget.h"

#include <algorithm>

#include "core/engine_descriptor.h"

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
    s += " + " + std::to_string(u.gpu_buffers) + " held by the GPU (bursts_in_flight x (batch_size + job_packets, at most ring_depth / 2 bursts in all))";
  if (u.engine_buffers) {
    s += " + " + std::to_string(u.engine_buffers);
    if (const EngineDescriptor* engine = find_descriptor(u.iface->engine); engine && engine->lent_buffers_why)
      s += engine->lent_buffers_why(*u.iface, u.rx);
  }
  return s + " = " + std::to_string(u.buffers) + ")";
}

// What to lower besides num_bufs to raise: the knobs the users' numbers come from.
std::string knobs(const PoolBudget& b) {
  // Each engine's knobs once, in the order engines are described, rx before tx.
  std::string s = "ring_depth / batch_size";
  for (const auto* engine : engine_descriptors()) {
    for (bool rx : {true, false}) {
      const bool used = std::any_of(b.users.begin(), b.users.end(), [&](const PoolUser& u) {
        return u.rx == rx && u.engine_buffers && u.iface->engine == engine->name;
      });
      const std::string& knobs = rx ? engine->lent_knobs_rx : engine->lent_knobs_tx;
      if (used && !knobs.empty()) s += " / " + knobs;
    }
  }
  return s;
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
