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
  bool rdma = false;  // written rdma://
  std::string to_string() const;
};

// Parses an endpoint URL. On failure returns nullopt and sets *error to what is wrong and
// what is allowed.
std::optional<Endpoint> parse_endpoint(std::string_view url, std::string* error);

// rdma://HOST:PORT (rdma://HOST when `port_required` is false: port 0), the rdma engine's
// addresses. `protocol` is left as udp: RoCEv2 travels in UDP, and no socket engine reads it.
std::optional<Endpoint> parse_rdma_endpoint(std::string_view url, bool port_required, std::string* error);

}  // namespace netdaq::detail
