// The dpdk engine: a DPDK ethdev port (PCI NIC or virtual device) behind netdaq's queues.
//
//   address: a PCI address (0000:3b:00.0) or a virtual device with its arguments
//            (net_af_xdp0,iface=veth1); rx/tx queue ids are the port's queue ids (0..n-1)
//   eal:     DPDK's environment for the process (eal.cpp)
//   rx:      mbufs over the queue's memory region (mbuf_pools), zero-copy to the application;
//            two regions = header-data split; flows become rte_flow rules (flow_rules) and are
//            matched again in software for flow ids and wrong-queue counts (flow_table)
//   tx:      the application's buffers attached to mbufs; the engine writes Ethernet/IPv4/UDP
//            headers (dpdk.dst_mac, dpdk.src_ip, tx.destination), checksums by the NIC if it can
//   loopback: software (tx bursts of queue k come back on rx queue k) or hardware (the NIC's)
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <map>
#include <mutex>

#include "core/log.h"
#include "engines/dpdk/eal.h"
#include "engines/dpdk/flow_rules.h"
#include "engines/dpdk/ports.h"
#include "net/udp4_destination.h"

namespace netdaq::detail {
namespace dpdk {
namespace {

class DpdkEngine final : public Engine {
 public:
  DpdkEngine(const Config& config, const InterfaceConfig& iface)
      : iface_(iface), context_("dpdk engine: interface '" + iface.name + "'") {
    acquire_eal(config);
    device_ = std::make_unique<Device>(iface, context_);
    port_stats_ = std::make_unique<PortStats>(device_->port());
    flow_state_ = std::make_unique<FlowState>(iface.name, static_cast<uint16_t>(iface.rx.queues.size()));
    const bool software = iface.options.get<DpdkOptions>().loopback == DpdkLoopback::software;
    bool split = false;
    for (const auto& q : iface.rx.queues) split |= q.memory_regions.size() == 2;
    device_->configure(split && !software);
    if (software)
      for (const auto& q : iface.tx.queues) loopback_[q.id] = make_ring(q.id);
    rules_ = std::make_unique<FlowRules>(device_->port(), device_->driver(), context_);
    log()->info("{}: port {} ({}, driver {}), {} rx / {} tx queues{}", context_, device_->port(), device_->name(),
                device_->driver(), iface.rx.queues.size(), iface.tx.queues.size(),
                software ? ", software loopback" : "");
  }

  ~DpdkEngine() override {
    rules_.reset();  // flows before the port closes
    device_.reset();  // the port hands its mbufs back before their pools go
    for (auto& [id, ring] : loopback_) {
      void* m = nullptr;
      while (rte_ring_dequeue(ring, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
      rte_ring_free(ring);
    }
  }

  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override {
    const std::string ctx = context_ + " rx queue '" + q.name + "'";
    RegionMbufPool& pool = pool_for(*q.pools[0], ctx);
    rte_mempool* payload = q.segments == 2 && device_->split() ? pool_for(*q.pools[1], ctx).mempool() : nullptr;
    device_->setup_rx_queue(q.queue->id, pool.mempool(), payload);
    if (q.queue->id == 0) rx0_ = q.counters;
    return make_rx_port(q, context_for(q.queue->id), *flow_state_, pool);
  }

  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override {
    const std::string ctx = context_ + " tx queue '" + q.name + "'";
    const uint32_t cache = iface_.options.get<DpdkOptions>().mempool_cache;
    // testpmd's loop: the queue's region becomes a mempool of mbufs (each buffer one mbuf's
    // data, for good), allocated and freed in bulk. A region other queues use too: mbuf
    // headers attached to its buffers per packet instead (a callback per packet sent).
    std::unique_ptr<RegionMbufPool> own;
    std::unique_ptr<TxMbufs> attached;
    try {
      own = std::make_unique<RegionMbufPool>(*q.pools[0], device_->port(), device_->socket(), cache, false, ctx);
    } catch (const Error& e) {
      if (e.code() != Errc::resource) throw;
      log()->info("{}: {}; sending through mbufs attached per packet (slower)", ctx, e.what());
      attached = std::make_unique<TxMbufs>(*q.pools[0], *q.counters, device_->port(), device_->socket(), cache, ctx);
    }
    device_->setup_tx_queue(q.queue->id);
    if (q.queue->id == 0) tx0_ = q.counters;
    // tx_raw_frames: the application writes the whole frame; no headers to work out.
    std::optional<Ipv4UdpHeaders> headers;
    if (!iface_.options.get<DpdkOptions>().tx_raw_frames) headers = tx_headers(ctx);
    TxMbufs* mbufs = attached.get();
    RegionMbufPool* region = own.get();
    if (own) tx_pools_.push_back(std::move(own));
    if (attached) tx_mbufs_.push_back(std::move(attached));
    return make_tx_port(q, context_for(q.queue->id), mbufs, region, headers);
  }

  void start() override {
    port_stats_->set_first_queues(rx0_, tx0_);
    device_->start();
    for (const auto& f : iface_.rx.flows) add_flow(f);
  }

  void stop() noexcept override { device_->stop(); }

  void add_flow(const FlowConfig& f) override {
    std::lock_guard lock(flows_mu_);
    for (uint16_t q : f.queues.empty() ? std::vector<uint16_t>{f.queue} : f.queues)
      if (q >= iface_.rx.queues.size())
        throw Error(Errc::invalid_config, context_ + ": flow " + std::to_string(f.id) + " steers to rx queue " +
                                              std::to_string(q) + ", which does not exist (rx queues 0.." +
                                              std::to_string(iface_.rx.queues.size()) + ")");
    for (const auto& g : flows_)
      if (g.id == f.id) throw Error(Errc::state, context_ + ": flow " + std::to_string(f.id) + " exists already");
    std::vector<FlowConfig> next = flows_;
    next.push_back(f);
    flow_state_->publish(next);  // throws on a bad address before the NIC is touched
    if (iface_.options.get<DpdkOptions>().loopback != DpdkLoopback::software) {
      try {
        rules_->add(f);
      } catch (...) {
        flow_state_->publish(flows_);
        throw;
      }
    }
    flows_ = std::move(next);
    log()->info("{}: flow {} steered ({})", context_, f.id, describe(f));
  }

  void remove_flow(uint32_t id) override {
    std::lock_guard lock(flows_mu_);
    auto it = std::find_if(flows_.begin(), flows_.end(), [id](const FlowConfig& f) { return f.id == id; });
    if (it == flows_.end()) throw Error(Errc::not_found, context_ + ": no flow " + std::to_string(id));
    if (rules_->has(id)) rules_->remove(id);
    flows_.erase(it);
    flow_state_->publish(flows_);
    log()->info("{}: flow {} removed", context_, id);
  }

  std::vector<FlowStats> flow_stats() const override {
    std::lock_guard lock(flows_mu_);
    if (flows_.empty()) return {};
    return flow_state_->stats(flows_);
  }

 private:
  PortContext context_for(uint16_t id) {
    auto it = loopback_.find(id);
    return PortContext{*device_, *port_stats_, it == loopback_.end() ? nullptr : it->second};
  }

  rte_ring* make_ring(uint16_t id) {
    static std::atomic<unsigned> n{0};
    const std::string name = "ndq_lb" + std::to_string(n.fetch_add(1));
    const unsigned size = rte_align32pow2(std::max<unsigned>(iface_.options.get<DpdkOptions>().rx_desc, 64));
    rte_ring* r = rte_ring_create(name.c_str(), size, device_->socket(), RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (!r)
      throw Error(Errc::resource, context_ + ": cannot create the software loopback ring of queue " +
                                      std::to_string(id) + ": " + rte_strerror(rte_errno));
    return r;
  }

  RegionMbufPool& pool_for(BufferPool& pool, const std::string& ctx) {
    auto& p = rx_pools_[&pool];
    if (!p) {
      p = std::make_unique<RegionMbufPool>(pool, device_->port(), device_->socket(), iface_.options.get<DpdkOptions>().mempool_cache,
                                           device_->needs_own_mbufs(), ctx);
      if (!p->in_region())
        log()->info("{}: driver {} needs mbufs of its own layout: region '{}' stays unused, the packets land in "
                    "EAL memory (eal.memory_mb)", ctx, device_->driver(), pool.region().name());
    }
    return *p;
  }

  // Software loopback never leaves the process: its addresses may stay unset (zeros).
  Ipv4UdpHeaders tx_headers(const std::string& ctx) const {
    const DpdkOptions& o = iface_.options.get<DpdkOptions>();
    const bool software = o.loopback == DpdkLoopback::software;
    Udp4Destination dst;
    if (!software || !iface_.tx.destination.empty()) dst = udp4_destination(iface_.tx.destination, "dpdk", ctx);
    if (o.src_ip.empty() && !software)
      throw Error(Errc::invalid_config, ctx + ": set dpdk.src_ip (a DPDK port has no IP address of its own)");
    if (o.dst_mac.empty() && !software)
      throw Error(Errc::invalid_config, ctx + ": set dpdk.dst_mac (DPDK has no neighbour table; the receiver's MAC, "
                                              "or the router's for a destination behind one)");
    const uint32_t src_ip = o.src_ip.empty() ? 0 : ipv4_option(o.src_ip, "dpdk.src_ip", ctx);
    const Mac dst_mac = o.dst_mac.empty() ? Mac{} : mac_option(o.dst_mac, "dpdk.dst_mac", ctx);
    rte_ether_addr own{};
    rte_eth_macaddr_get(device_->port(), &own);
    Mac src{};
    std::copy(own.addr_bytes, own.addr_bytes + 6, src.begin());
    return Ipv4UdpHeaders(src, dst_mac, src_ip, dst.ip, o.src_port ? o.src_port : dst.port, dst.port);
  }

  const InterfaceConfig& iface_;
  std::string context_;
  // Destroyed in reverse: the device (and its rings' mbufs) before the pools they came from.
  std::map<const BufferPool*, std::unique_ptr<RegionMbufPool>> rx_pools_;
  std::vector<std::unique_ptr<TxMbufs>> tx_mbufs_;
  std::vector<std::unique_ptr<RegionMbufPool>> tx_pools_;  // tx queues' regions as mempools
  std::map<uint16_t, rte_ring*> loopback_;
  std::unique_ptr<FlowState> flow_state_;
  std::unique_ptr<PortStats> port_stats_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<FlowRules> rules_;
  mutable std::mutex flows_mu_;
  std::vector<FlowConfig> flows_;
  QueueCounters* rx0_ = nullptr;
  QueueCounters* tx0_ = nullptr;
};

}  // namespace
}  // namespace dpdk

void register_dpdk_engine() {
  register_engine("dpdk", [](const Config& config, const InterfaceConfig& iface) -> std::unique_ptr<Engine> {
    return std::make_unique<dpdk::DpdkEngine>(config, iface);
  });
}

}  // namespace netdaq::detail
