// The dpdk engine's RX and TX ports (rx.cpp, tx.cpp), opened by engine.cpp.
#pragma once

#include <rte_ring.h>

#include <memory>
#include <optional>

#include "core/engine.h"
#include "netdaq/engines/dpdk.h"
#include "engines/dpdk/device.h"
#include "engines/dpdk/flow_table.h"
#include "engines/dpdk/mbuf_pools.h"
#include "engines/dpdk/port_stats.h"
#include "net/frame_headers.h"

namespace netdaq::detail::dpdk {

struct PortContext {
  Device& device;
  PortStats& port_stats;
  rte_ring* loopback = nullptr;  // software loopback: tx bursts of this queue id, instead of the NIC
};

// Zero-copy: each packet keeps its mbuf (Packet handle) until the application releases it.
std::unique_ptr<RxPort> make_rx_port(const QueueResources& q, const PortContext& ctx, FlowState& flows,
                                     const RegionMbufPool& pool);
// Exactly one of region (the queue's region as a mempool: bulk mbufs, as testpmd) and mbufs
// (headers attached to the pool's buffers per packet: a region other queues share).
// headers: what the engine writes in front of each payload; nullopt: the application writes
// the whole frame (dpdk.tx_raw_frames).
std::unique_ptr<TxPort> make_tx_port(const QueueResources& q, const PortContext& ctx, TxMbufs* mbufs,
                                     RegionMbufPool* region, const std::optional<Ipv4UdpHeaders>& headers);

}  // namespace netdaq::detail::dpdk
