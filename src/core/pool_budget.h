// How many buffers of a pool its queues can hold at once. A pool smaller than that can
// deadlock: every buffer sits in a ring or a burst the application has not released yet,
// and the engine cannot receive the packets that would let the application move on.
// Shared by the validator and the runtime.
#pragma once

#include <cstdint>
#include <vector>

#include "netdaq/config.h"

namespace netdaq::detail {

// Buffers one queue can hold at once from each region it uses:
//   rx, worker mode: (ring_depth + 1) * batch_size  (ring full + the burst being filled)
//   rx, direct mode: ring_depth * batch_size
//   tx:              ring_depth * batch_size
// plus, for an rx queue with rx.reorder, bursts_in_flight * (batch_size + job_packets)
// (bursts held until the GPU has read them), plus on an afxdp interface the buffers the kernel
// holds and on a dpdk interface those the NIC and DPDK hold (engine_buffers()).
// Saturates at UINT64_MAX instead of overflowing.
uint64_t buffers_held(const QueueConfig& q, bool rx) noexcept;

// Buffers of a queue the engine has handed to the kernel or the NIC, per region the queue
// uses: the engine's EngineDescriptor::lent_buffers (e.g. afxdp rx: fill_ring; dpdk rx:
// rx_desc + mempool_cache). 0 for engines whose queues hold only what buffers_held() counts.
uint64_t engine_buffers(const InterfaceConfig& iface, bool rx) noexcept;

struct PoolUser {
  const InterfaceConfig* iface = nullptr;
  const QueueConfig* queue = nullptr;
  bool rx = true;
  uint64_t buffers = 0;         // buffers_held(*queue, rx) + gpu_buffers + engine_buffers, once per
                                // time the queue names the region
  uint64_t gpu_buffers = 0;     // held by the queue's GPU frame pipeline
  uint64_t engine_buffers = 0;  // held by the kernel or the NIC for the engine (afxdp rings,
                                // dpdk descriptors and mempool cache)
};

struct PoolBudget {
  const MemoryRegionConfig* region = nullptr;
  std::vector<PoolUser> users;  // in config order
  uint64_t total = 0;           // sum of users' buffers (saturating)
  bool fits() const noexcept { return total <= region->num_bufs; }
};

// One budget per memory region of `cfg`, in order.
std::vector<PoolBudget> pool_budgets(const Config& cfg);

}  // namespace netdaq::detail
