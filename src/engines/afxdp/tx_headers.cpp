#include "engines/afxdp/tx_headers.h"

#include <arpa/inet.h>

#include "core/endpoint.h"
#include "netdaq/status.h"

namespace netdaq::detail::afxdp {

Ipv4UdpHeaders resolve_tx_headers(const NetdevInfo& dev, const InterfaceConfig& iface, const std::string& context) {
  const std::string& url = iface.tx.destination;
  std::string error;
  const auto ep = parse_endpoint(url, &error);
  if (!ep) throw Error(Errc::invalid_config, context + ": tx.destination '" + url + "': " + error);
  if (ep->protocol != Protocol::udp || ep->port == 0)
    throw Error(Errc::invalid_config, context + ": tx.destination '" + url + "' must be udp://IPV4:PORT for afxdp");
  uint32_t dst_ip = 0;
  if (ep->ipv6 || inet_pton(AF_INET, ep->host.c_str(), &dst_ip) != 1)
    throw Error(Errc::unsupported, context + ": tx.destination '" + url +
                                       "': afxdp sends IPv4 UDP; give an IPv4 address (IPv6 sending is not built yet)");

  uint32_t src_ip = 0;
  const AfxdpOptions& o = iface.afxdp;
  if (!o.src_ip.empty()) {
    if (inet_pton(AF_INET, o.src_ip.c_str(), &src_ip) != 1)
      throw Error(Errc::invalid_config, context + ": afxdp.src_ip '" + o.src_ip + "' is not an IPv4 address");
  } else if (auto a = interface_ipv4(dev.name)) {
    src_ip = *a;
  } else {
    throw Error(Errc::not_found, context + ": interface '" + dev.name +
                                     "' has no IPv4 address to send from: add one, or set afxdp.src_ip");
  }

  Mac dst_mac{};
  if (!o.dst_mac.empty()) {
    auto m = parse_mac(o.dst_mac);
    if (!m) throw Error(Errc::invalid_config, context + ": afxdp.dst_mac '" + o.dst_mac + "' is not a MAC address");
    dst_mac = *m;
  } else if (auto m = neighbour_mac(dev.name, dst_ip)) {
    dst_mac = *m;
  } else {
    throw Error(Errc::not_found, context + ": no neighbour entry for " + ep->host + " on '" + dev.name +
                                     "' (AF_XDP bypasses ARP): set afxdp.dst_mac, or let the kernel resolve it first "
                                     "(ping -c1 " + ep->host + "); for a destination behind a router give the "
                                     "router's MAC");
  }
  const uint16_t src_port = o.src_port ? o.src_port : ep->port;
  return Ipv4UdpHeaders(dev.mac, dst_mac, src_ip, dst_ip, src_port, ep->port);
}

}  // namespace netdaq::detail::afxdp
