// The rdma engine: rdma-core verbs over RoCE, InfiniBand or Soft-RoCE (docs/rdma-engine.md).
//
//   address: rdma://IP:PORT         rx queues: a listener there hands each connection to an
//                                   idle rx queue (one queue pair per queue)
//   tx.destination: rdma://IP:PORT  each tx queue connects a queue pair of its own
//
// One file per piece: verbs (RAII owners, rdma_cm events), device_memory (protection domain
// and memory registrations), listener (server side), rx, tx.
#include "engines/rdma/ports.h"
#include "netdaq/engines/rdma.h"

namespace netdaq::detail {
namespace rdma {
namespace {

Endpoint endpoint_of(const std::string& url, const std::string& context, const char* key, bool port_required = true) {
  std::string why;
  auto ep = parse_rdma_endpoint(url, port_required, &why);
  if (!ep || !ep->ip) throw Error(Errc::invalid_config, context + ": " + key + " '" + url + "': " + why);
  return *ep;
}

class RdmaEngine final : public Engine {
 public:
  explicit RdmaEngine(const InterfaceConfig& iface) : iface_(iface), options_(iface.options.get<RdmaOptions>()) {
    require_rdma_device("rdma engine: interface '" + iface_.name + "'");
  }

  ~RdmaEngine() override { stop(); }

  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override {
    check_supported(q, true);
    const std::string context = "rdma engine: interface '" + iface_.name + "'";
    if (options_.connect == RdmaConnect::manual) {
      ManualLink& l = link(context);
      auto port = options_.op == RdmaOp::write_imm ? open_ring_recv_port(q, options_, l.memory())
                                                   : open_send_recv_port(q, options_, l.memory());
      auto qp = l.create_qp(port->cq(), port->send_depth(), options_.recv_depth, 8, queue_context(q, true));
      l.add(port.get(), qp.get(), true);
      port->use_manual_qp(std::move(qp), &l);
      return port;
    }
    if (!listener_) {
      listener_ = std::make_unique<Listener>(endpoint_of(iface_.address, context, "address"), options_, context);
      devices_.push_back(std::make_unique<DeviceMemory>(listener_->device()));
    }
    auto port = options_.op == RdmaOp::write_imm ? open_ring_recv_port(q, options_, *devices_.front())
                                                 : open_send_recv_port(q, options_, *devices_.front());
    listener_->add_queue(port.get());
    return port;
  }

  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override {
    check_supported(q, false);
    const std::string context = queue_context(q, false);
    if (options_.connect == RdmaConnect::manual)
      return open_manual_send_port(q, options_, link("rdma engine: interface '" + iface_.name + "'"));
    std::optional<Endpoint> source;
    if (!iface_.address.empty()) source = endpoint_of(iface_.address, context, "address", false);
    auto port = open_send_port(q, options_, source, endpoint_of(iface_.tx.destination, context, "tx.destination"), devices_);
    cm_tx_.push_back(port.get());
    return port;
  }

  // manual: the local file is written once every queue pair exists, then the pairing starts.
  void start() override {
    if (link_) link_->start();
  }
  // Before any queue closes (the session stops every engine first): no reconnects from now.
  void stop() noexcept override {
    for (CmTxPort* p : cm_tx_) p->stop_watching();
    cm_tx_.clear();
    if (listener_) listener_->stop();
    if (link_) link_->stop();
  }

 private:
  void check_supported(const QueueResources& q, bool rx) const {
    const std::string context = queue_context(q, rx);
    if (q.segments != 1)
      throw Error(Errc::invalid_config, context + ": the rdma engine takes one memory region per queue");
  }

  const InterfaceConfig& iface_;
  RdmaOptions options_;
  std::vector<std::unique_ptr<DeviceMemory>> devices_;  // before the listener: it outlives the ports' registrations
  std::unique_ptr<Listener> listener_;
  std::unique_ptr<ManualLink> link_;  // connect: manual
  std::vector<CmTxPort*> cm_tx_;       // the tx queues it opened through rdma_cm (the session owns them)

  ManualLink& link(const std::string& context) {
    if (!link_) link_ = std::make_unique<ManualLink>(endpoint_of(iface_.address, context, "address", false), options_, context);
    return *link_;
  }
};

}  // namespace
}  // namespace rdma

void register_rdma_engine() {
  register_engine(kRdmaEngine, [](const Config&, const InterfaceConfig& iface) -> std::unique_ptr<Engine> {
    return std::make_unique<rdma::RdmaEngine>(iface);
  });
}

}  // namespace netdaq::detail
