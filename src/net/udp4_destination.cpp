#include "net/udp4_destination.h"

#include "net/endpoint.h"
#include "net/ip_address.h"
#include "net/mac_address.h"
#include "netdaq/status.h"

namespace netdaq::detail {

Udp4Destination udp4_destination(const std::string& url, const std::string& engine, const std::string& context) {
  std::string error;
  const auto ep = parse_endpoint(url, &error);
  if (!ep) throw Error(Errc::invalid_config, context + ": tx.destination '" + url + "': " + error);
  if (ep->protocol != Protocol::udp || ep->port == 0)
    throw Error(Errc::invalid_config, context + ": tx.destination '" + url + "' must be udp://IPV4:PORT for " + engine);
  Udp4Destination d;
  d.port = ep->port;
  if (!ep->ip || !ep->ip->is_v4())
    throw Error(Errc::unsupported, context + ": tx.destination '" + url + "': " + engine +
                                       " sends IPv4 UDP; give an IPv4 address (IPv6 sending is not built yet)");
  d.ip = ep->ip->v4_network_order();
  return d;
}

uint32_t ipv4_option(const std::string& text, const std::string& key, const std::string& context) {
  const auto ip = parse_ipv4(text);
  if (!ip) throw Error(Errc::invalid_config, context + ": " + key + " '" + text + "' is not an IPv4 address");
  return ip->v4_network_order();
}

Mac mac_option(const std::string& text, const std::string& key, const std::string& context) {
  auto m = parse_mac(text);
  if (!m) throw Error(Errc::invalid_config, context + ": " + key + " '" + text + "' is not a MAC address");
  return *m;
}

}  // namespace netdaq::detail
