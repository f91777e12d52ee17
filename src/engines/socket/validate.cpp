// Socket engine: endpoints, multicast, TCP message size and the memory its queues may use.
#include "engines/socket/validate.h"
#include "netdaq/engines/socket.h"
#include "net/endpoint.h"

namespace netdaq::detail {

namespace {

constexpr const char* kEndpointForm = "udp://HOST:PORT or tcp://HOST:PORT";

// Parses a configured endpoint; reports a missing (when `required`) or malformed one.
std::optional<Endpoint> endpoint(Checker& c, const std::string& key, const std::string& url, bool required,
                                 const std::string& why_required) {
  if (url.empty()) {
    if (required) c.error(key, "", "is required for the socket engine " + why_required + ": " + kEndpointForm);
    return std::nullopt;
  }
  std::string error;
  auto ep = parse_endpoint(url, &error);
  if (!ep) c.error(key, url, error);
  else if (ep->multicast && ep->protocol == Protocol::tcp) c.error(key, url, "a multicast group needs udp://, not tcp://");
  return ep;
}

// A TCP message is received into one buffer of the queue's payload region (its last region).
void check_tcp_message(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const uint32_t max = iface.options.get<SocketOptions>().tcp_max_message;
  if (max == 0) return;
  for (const auto& q : iface.rx.queues) {
    if (q.memory_regions.empty()) continue;
    const MemoryRegionConfig* r = c.config().find_region(q.memory_regions.back());
    if (!r || max <= r->buf_size) continue;
    c.error(path + ".socket.tcp_max_message", std::to_string(max),
            "must be <= " + std::to_string(r->buf_size) + ", the buf_size of region '" + r->name +
                "' (payload region of rx queue " + queue_label(iface, q, true) + "): a message must fit one buffer");
    return;
  }
}

}  // namespace

void check_socket_engine(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  auto local = endpoint(c, path + ".address", iface.address, !iface.rx.queues.empty(),
                        "when rx queues are configured (address to bind or listen on)");
  auto remote = endpoint(c, path + ".tx.destination", iface.tx.destination, !iface.tx.queues.empty(),
                         "when tx queues are configured (where to send)");

  // The interface joins a group on it (rx) or sends group traffic out of it (tx).
  const bool uses_multicast = (local && local->multicast) || (remote && remote->multicast);
  if (!iface.options.get<SocketOptions>().multicast_interface.empty() && !uses_multicast)
    c.error(path + ".socket.multicast_interface", iface.options.get<SocketOptions>().multicast_interface,
            "is only allowed when address or tx.destination is a multicast group (e.g. udp://239.1.2.3:5000)");
  if (local && local->protocol == Protocol::tcp) check_tcp_message(c, iface, path);
}

}  // namespace netdaq::detail
