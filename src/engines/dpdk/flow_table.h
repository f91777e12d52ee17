// The interface's flows as the rx ports see them: which flow a packet belongs to (its id
// for Packet::flow()), whether it arrived on a queue the flow is steered to, and per-flow
// counters. Flows change at run time: a new table is published atomically and the old ones
// stay alive until the engine closes, so rx threads never wait or see a half-built table.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "net/flow_matcher.h"
#include "netdaq/stats.h"

namespace netdaq::detail::dpdk {

// Counters of one flow per rx queue: each slot has one writer (its queue's poller).
struct alignas(64) FlowSlot {
  std::atomic<uint64_t> packets{0}, bytes{0}, wrong_queue{0};
  void add(std::atomic<uint64_t>& c, uint64_t n) noexcept { c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
};

struct FlowTable {
  FlowMatcher matcher;
  std::vector<FlowSlot*> slots;  // per rule: that flow's slots, indexed by rx queue id
};

class FlowState {
 public:
  FlowState(const std::string& iface, uint16_t rx_queues);
  const FlowTable* current() const noexcept { return current_.load(std::memory_order_acquire); }
  FlowSlot& unmatched(uint16_t queue) noexcept { return unmatched_[queue]; }
  // Replace the flows (builds and publishes a new table; throws Error on a bad address).
  void publish(const std::vector<FlowConfig>& flows);
  std::vector<FlowStats> stats(const std::vector<FlowConfig>& flows) const;

 private:
  std::string iface_;
  uint16_t rx_queues_;
  std::mutex mu_;
  std::map<uint32_t, std::unique_ptr<FlowSlot[]>> slots_;  // by flow id; kept across tables
  std::unique_ptr<FlowSlot[]> unmatched_;
  std::vector<std::unique_ptr<FlowTable>> tables_;
  std::atomic<const FlowTable*> current_{nullptr};
};

}  // namespace netdaq::detail::dpdk
