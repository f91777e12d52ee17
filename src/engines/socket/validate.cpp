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

// ip_headers: one raw IPv4 socket per interface (each raw socket gets a copy of every datagram,
// so a second queue would receive everything twice), one region per queue (frame() needs the
// headers and payload in one buffer).
void check_ip_headers(Checker& c, const InterfaceConfig& iface, const std::string& path,
                      const std::optional<Endpoint>& local) {
  const std::string key = path + ".socket.ip_headers";
  if (!local) return;
  if (local->protocol != Protocol::udp || local->multicast || local->ipv6) {
    c.error(key, "true", "needs a unicast IPv4 udp:// address (IPv6 raw sockets never deliver the IP header); "
                         "address is '" + iface.address + "'");
    return;
  }
  if (iface.rx.queues.size() > 1)
    c.error(key, "true", "allows one rx queue per interface (" + std::to_string(iface.rx.queues.size()) +
                             " configured): each raw socket receives every datagram");
  for (const auto& q : iface.rx.queues) {
    if (q.memory_regions.size() > 1) {
      c.error(key, "true", "cannot be combined with header-data split (rx queue " + queue_label(iface, q, true) +
                               " names 2 regions): the headers stay in front of the payload");
      return;
    }
    const MemoryRegionConfig* r = q.memory_regions.empty() ? nullptr : c.config().find_region(q.memory_regions[0]);
    if (r && r->buf_size <= 42) {
      c.error(key, "true", "needs buffers larger than the 42 header bytes (region '" + r->name + "' has buf_size " +
                               std::to_string(r->buf_size) + ")");
      return;
    }
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
  if (iface.options.get<SocketOptions>().ip_headers) check_ip_headers(c, iface, path, local);
}

}  // namespace netdaq::detail
