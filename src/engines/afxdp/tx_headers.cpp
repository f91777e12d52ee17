#include "engines/afxdp/tx_headers.h"

#include <arpa/inet.h>

#include "net/udp4_destination.h"
#include "netdaq/status.h"

namespace netdaq::detail::afxdp {

Ipv4UdpHeaders resolve_tx_headers(const NetdevInfo& dev, const InterfaceConfig& iface, const std::string& context) {
  const Udp4Destination dst = udp4_destination(iface.tx.destination, "afxdp", context);
  const AfxdpOptions& o = iface.options.get<AfxdpOptions>();
  uint32_t src_ip = 0;
  if (!o.src_ip.empty()) {
    src_ip = ipv4_option(o.src_ip, "afxdp.src_ip", context);
  } else if (auto a = interface_ipv4(dev.name)) {
    src_ip = *a;
  } else {
    throw Error(Errc::not_found, context + ": interface '" + dev.name +
                                     "' has no IPv4 address to send from: add one, or set afxdp.src_ip");
  }

  Mac dst_mac{};
  if (!o.dst_mac.empty()) {
    dst_mac = mac_option(o.dst_mac, "afxdp.dst_mac", context);
  } else if (auto m = neighbour_mac(dev.name, dst.ip)) {
    dst_mac = *m;
  } else {
    char host[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &dst.ip, host, sizeof host);
    const std::string h = host;
    throw Error(Errc::not_found, context + ": no neighbour entry for " + h + " on '" + dev.name +
                                     "' (AF_XDP bypasses ARP): set afxdp.dst_mac, or let the kernel resolve it first "
                                     "(ping -c1 " + h + "); for a destination behind a router give the "
                                     "router's MAC");
  }
  const uint16_t src_port = o.src_port ? o.src_port : dst.port;
  return Ipv4UdpHeaders(dev.mac, dst_mac, src_ip, dst.ip, src_port, dst.port);
}

}  // namespace netdaq::detail::afxdp
