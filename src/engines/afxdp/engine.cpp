// The afxdp engine: AF_XDP sockets on a netdev, fed by netdaq's eBPF steering program.
//
//   address: the netdev (e.g. eth1); rx/tx queue ids are the NIC's queue ids
//   rx.flows: matched by the steering program; a flow's packets go to the XSK of its queue,
//             everything else passes to the kernel (no flows: every UDP packet to its queue)
//   tx.destination: udp://IPV4:PORT; the engine writes the Ethernet/IP/UDP headers
//
// One XSK per (interface, queue id), shared by the rx and tx queue of that id; one UMEM per
// memory region, shared by the XSKs that use it. Files: xdp_program (load/attach/stale
// recovery), umem, xsk_socket (zero-copy/copy, need_wakeup, busy poll), rx, tx, headers.
#include <map>

#include "core/log.h"
#include "engines/afxdp/ports.h"
#include "engines/afxdp/tx_headers.h"

namespace netdaq::detail {
namespace afxdp {
namespace {

class AfxdpEngine final : public Engine {
 public:
  explicit AfxdpEngine(const InterfaceConfig& iface) : iface_(iface) {}

  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override {
    const std::string context = "afxdp engine: interface '" + iface_.name + "' rx queue '" + q.name + "'";
    start(context);
    if (!program_) program_ = std::make_unique<SteeringProgram>(dev_, iface_, context);
    auto xsk = socket_for(q, context);
    program_->add_xsk(q.queue->id, xsk->fd());
    log()->info("{}: AF_XDP on {} queue {}: {} XDP, {}", q.name, dev_.name, q.queue->id,
                program_->native() ? "native" : "generic", xsk->mode());
    return make_rx_port(q, std::move(xsk), *program_);
  }

  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override {
    const std::string context = "afxdp engine: interface '" + iface_.name + "' tx queue '" + q.name + "'";
    start(context);
    // tx_raw_frames: the application writes the whole frame; no headers to resolve.
    std::optional<Ipv4UdpHeaders> headers;
    if (!iface_.options.get<AfxdpOptions>().tx_raw_frames) headers = resolve_tx_headers(dev_, iface_, context);
    auto xsk = socket_for(q, context);
    log()->info("{}: AF_XDP on {} queue {}: {}{}", q.name, dev_.name, q.queue->id, xsk->mode(),
                headers ? "" : ", raw frames");
    return make_tx_port(q, std::move(xsk), headers);
  }

  std::vector<FlowStats> flow_stats() const override { return program_ ? program_->flow_stats() : std::vector<FlowStats>{}; }

 private:
  void start(const std::string& context) {
    if (started_) return;
    if (iface_.address.empty())
      throw Error(Errc::invalid_config, context + ": address is empty; the afxdp engine needs a network interface "
                                                  "name (e.g. eth1)");
    dev_ = netdev_info(iface_.address, context);
    started_ = true;
  }

  bool has_queue(const std::vector<QueueConfig>& queues, uint16_t id) const {
    for (const auto& q : queues)
      if (q.id == id) return true;
    return false;
  }

  // The XSK of the queue's id: made with the rings of every direction configured for that id.
  std::shared_ptr<XskSocket> socket_for(const QueueResources& q, const std::string& context) {
    if (q.segments != 1)
      throw Error(Errc::invalid_config, context + ": AF_XDP cannot split headers from payload (one memory region "
                                                  "per queue; use the dpdk engine for header-data split)");
    const uint16_t id = q.queue->id;
    BufferPool* pool = q.pools[0];
    if (auto it = sockets_.find(id); it != sockets_.end()) {
      if (&it->second->umem().pool() != pool)
        throw Error(Errc::invalid_config, context + ": the rx and tx queue " + std::to_string(id) +
                                              " share one AF_XDP socket, so they must use the same memory region ('" +
                                              it->second->umem().pool().region().name() + "')");
      return it->second;
    }
    auto& umem = umems_[pool];
    if (!umem) umem = std::make_unique<Umem>(*pool, iface_.options.get<AfxdpOptions>(), context);
    auto xsk = std::make_shared<XskSocket>(dev_, id, *umem, has_queue(iface_.rx.queues, id),
                                           has_queue(iface_.tx.queues, id), iface_.options.get<AfxdpOptions>(), context);
    sockets_[id] = xsk;
    return xsk;
  }

  const InterfaceConfig& iface_;
  bool started_ = false;
  NetdevInfo dev_;
  // Destroyed in reverse: sockets, then the program (detached), then the UMEMs.
  std::map<BufferPool*, std::unique_ptr<Umem>> umems_;
  std::unique_ptr<SteeringProgram> program_;
  std::map<uint16_t, std::shared_ptr<XskSocket>> sockets_;
};

}  // namespace
}  // namespace afxdp

void register_afxdp_engine() {
  register_engine("afxdp", [](const Config&, const InterfaceConfig& iface) -> std::unique_ptr<Engine> {
    return std::make_unique<afxdp::AfxdpEngine>(iface);
  });
}

}  // namespace netdaq::detail
