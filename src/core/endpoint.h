// Socket endpoints written as URLs in the config: udp://host:port, tcp://host:port,
// udp://[v6addr]:port. Shared by the validator and the socket engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "netdaq/config.h"

namespace netdaq::detail {

struct Endpoint {
  Protocol protocol = Protocol::udp;
  std::string host;   // as written, without brackets
  uint16_t port = 0;
  bool ipv6 = false;  // host is an IPv6 literal
  bool multicast = false;  // host is an IPv4/IPv6 multicast literal
  std::string to_string() const;
};

// Parses an endpoint URL. On failure returns nullopt and sets *error to what is wrong and
// what is allowed.
std::optional<Endpoint> parse_endpoint(std::string_view url, std::string* error);

}  // namespace netdaq::detail
