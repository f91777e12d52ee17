#include "core/pool_budget.h"

#include <limits>

#include "core/engine_descriptor.h"
#include "core/reorder_layout.h"

namespace netdaq::detail {

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t mul_sat(uint64_t a, uint64_t b) { return (a != 0 && b > kMax / a) ? kMax : a * b; }
uint64_t add_sat(uint64_t a, uint64_t b) { return b > kMax - a ? kMax : a + b; }

}  // namespace

uint64_t buffers_held(const QueueConfig& q, bool rx) noexcept {
  const uint64_t bursts = uint64_t{q.ring_depth} + (rx && q.mode == PollMode::worker ? 1 : 0);
  return mul_sat(bursts, q.batch_size);
}

uint64_t engine_buffers(const InterfaceConfig& iface, bool rx) noexcept {
  const EngineDescriptor* engine = find_descriptor(iface.engine);
  return engine && engine->lent_buffers ? engine->lent_buffers(iface, rx) : 0;
}

std::vector<PoolBudget> pool_budgets(const Config& cfg) {
  std::vector<PoolBudget> budgets;
  for (const auto& region : cfg.memory_regions) {
    PoolBudget b;
    b.region = &region;
    for (const auto& iface : cfg.interfaces) {
      for (bool rx : {true, false}) {
        for (const auto& q : rx ? iface.rx.queues : iface.tx.queues) {
          for (const auto& name : q.memory_regions) {
            if (name != region.name) continue;
            // A GPU frame pipeline on the queue keeps bursts until the GPU has read them: per job
            // in flight one burst, or job_packets gathered plus the burst that completes them.
            uint64_t gpu = 0;
            if (rx)
              for (const auto& g : iface.rx.reorder)
                if (g.queue == q.id)
                  gpu = add_sat(gpu, mul_sat(g.bursts_in_flight, buffers_per_job(g, q.batch_size, q.ring_depth)));
            const uint64_t kernel = engine_buffers(iface, rx);
            b.users.push_back(
                PoolUser{&iface, &q, rx, add_sat(add_sat(buffers_held(q, rx), gpu), kernel), gpu, kernel});
            b.total = add_sat(b.total, b.users.back().buffers);
          }
        }
      }
    }
    budgets.push_back(std::move(b));
  }
  return budgets;
}

}  // namespace netdaq::detail
