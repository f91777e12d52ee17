#include "engines/dpdk/flow_table.h"

namespace netdaq::detail::dpdk {

FlowState::FlowState(const std::string& iface, uint16_t rx_queues)
    : iface_(iface), rx_queues_(rx_queues), unmatched_(new FlowSlot[rx_queues ? rx_queues : 1]) {
  publish({});
}

void FlowState::publish(const std::vector<FlowConfig>& flows) {
  auto t = std::make_unique<FlowTable>();
  t->matcher = FlowMatcher(flows);
  std::lock_guard lock(mu_);
  for (const auto& f : flows) {
    auto& s = slots_[f.id];
    if (!s) s.reset(new FlowSlot[rx_queues_ ? rx_queues_ : 1]);
    t->slots.push_back(s.get());
  }
  current_.store(t.get(), std::memory_order_release);
  tables_.push_back(std::move(t));
}

std::vector<FlowStats> FlowState::stats(const std::vector<FlowConfig>& flows) const {
  std::vector<FlowStats> v;
  auto sum = [&](const FlowSlot* s, FlowStats& r) {
    for (uint16_t q = 0; q < rx_queues_; ++q) {
      r.packets += s[q].packets.load(std::memory_order_relaxed);
      r.bytes += s[q].bytes.load(std::memory_order_relaxed);
      r.wrong_queue += s[q].wrong_queue.load(std::memory_order_relaxed);
    }
  };
  auto& self = const_cast<FlowState&>(*this);
  std::lock_guard lock(self.mu_);
  for (const auto& f : flows) {
    FlowStats r;
    r.interface = iface_;
    r.flow = f.id;
    r.queue = f.queues.empty() ? f.queue : f.queues.front();
    auto it = slots_.find(f.id);
    if (it != slots_.end()) sum(it->second.get(), r);
    v.push_back(r);
  }
  FlowStats u;
  u.interface = iface_;
  u.unmatched = true;
  sum(unmatched_.get(), u);
  v.push_back(u);
  return v;
}

}  // namespace netdaq::detail::dpdk
