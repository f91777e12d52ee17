// Socket endpoints written as URLs in the config: udp://host:port, tcp://host:port,
// udp://[v6addr]:port. The one parser of them: the validator and the engines (socket, and the
// tx.destination of afxdp and dpdk) share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/ip_address.h"
#include "netdaq/config.h"

namespace netdaq::detail {

struct Endpoint {
  Protocol protocol = Protocol::udp;
  std::string host;   // as written, without brackets
  uint16_t port = 0;
  bool ipv6 = false;  // host is an IPv6 literal (written in brackets)
  bool multicast = false;  // host is an IPv4/IPv6 multicast literal
  std::optional<IpAddress> ip;  // host as an IP literal (parse_ip); nullopt for a host name
  std::string to_string() const;
};

// Parses an endpoint URL. On failure returns nullopt and sets *error to what is wrong and
// what is allowed.
std::optional<Endpoint> parse_endpoint(std::string_view url, std::string* error);

}  // namespace netdaq::detail
