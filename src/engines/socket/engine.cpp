// The socket engine: kernel UDP and TCP through ordinary sockets. Always built.
//
//   address: udp://HOST:PORT  rx queues bind there (SO_REUSEPORT: several queues, one port;
//                             a multicast group is joined on socket.multicast_interface)
//            tcp://HOST:PORT  rx queues listen there (length-prefixed messages, see ports.h)
//   tx.destination: udp://... or tcp://...  where tx queues send
//
// One file per transport and direction (udp_rx, udp_tx, tcp_rx, tcp_tx) with the address
// and socket-option helpers beside them.
#include <sys/socket.h>

#include "core/log.h"
#include "engines/socket/address.h"
#include "engines/socket/ports.h"
#include "engines/socket/socket_options.h"

namespace netdaq::detail {
namespace socket_engine {
namespace {

void check_queue(const QueueResources& q, const std::string& context) {
  if (q.segments < 1 || q.segments > kMaxSegments || !q.pools[0] || (q.segments > 1 && !q.pools[1]))
    throw Error(Errc::invalid_config, context + ": the socket engine needs 1 memory region per queue, or 2 for "
                                                "header-data split");
}

class SocketEngine final : public Engine {
 public:
  explicit SocketEngine(const InterfaceConfig& iface) : iface_(iface) {}

  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override {
    const std::string context = "socket engine: " + queue_context(iface_.name, q.name, true);
    check_queue(q, context);
    if (iface_.address.empty())
      throw Error(Errc::invalid_config, context + ": address is empty; the socket engine receives on "
                                                  "udp://HOST:PORT or tcp://HOST:PORT");
    if (!rx_ready_) {
      rx_ep_ = parse_endpoint_or_throw(iface_.address, context, "address");
      rx_addr_ = resolve(rx_ep_, true, context);
      const int type = rx_ep_.protocol == Protocol::udp ? SOCK_DGRAM : SOCK_STREAM;
      // Our own queues share the port through SO_REUSEPORT, and so could another process
      // of the same user, silently taking part of the traffic: make sure nobody holds it.
      if (!rx_addr_.is_multicast() && rx_addr_.port() != 0) check_address_free(rx_addr_, type, iface_.address, context);
      if (rx_addr_.is_multicast() && iface_.rx.queues.size() > 1)
        log()->warn("interface '{}': {} rx queues on multicast group {}: each queue receives every datagram",
                    iface_.name, iface_.rx.queues.size(), rx_addr_.to_string());
      rx_ready_ = true;
    }
    if (rx_ep_.protocol == Protocol::udp && iface_.options.get<SocketOptions>().ip_headers)
      return open_udp_ip_rx(q, rx_addr_, iface_.address, context);
    if (rx_ep_.protocol == Protocol::udp) return open_udp_rx(q, rx_addr_, iface_.address, context);
    return open_tcp_rx(q, rx_addr_, iface_.address, context);
  }

  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override {
    const std::string context = "socket engine: " + queue_context(iface_.name, q.name, false);
    check_queue(q, context);
    const std::string& url = iface_.tx.destination;
    if (url.empty())
      throw Error(Errc::invalid_config, context + ": tx.destination is empty; the socket engine sends to "
                                                  "udp://HOST:PORT or tcp://HOST:PORT");
    const Endpoint ep = parse_endpoint_or_throw(url, context, "tx.destination");
    if (ep.port == 0) throw Error(Errc::invalid_config, context + ": tx.destination '" + url + "' needs a port");
    const SockAddr dest = resolve(ep, false, context);
    if (ep.protocol == Protocol::udp) return open_udp_tx(q, dest, url, context);
    return open_tcp_tx(q, dest, url, context);
  }

 private:
  const InterfaceConfig& iface_;
  bool rx_ready_ = false;
  Endpoint rx_ep_;
  SockAddr rx_addr_;  // port filled in after the first queue bound port 0
};

}  // namespace
}  // namespace socket_engine

void register_socket_engine() {
  register_engine(kSocketEngine, [](const Config&, const InterfaceConfig& iface) -> std::unique_ptr<Engine> {
    return std::make_unique<socket_engine::SocketEngine>(iface);
  });
}

}  // namespace netdaq::detail
