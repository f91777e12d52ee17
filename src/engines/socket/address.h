// Socket engine: an Endpoint (udp://host:port, tcp://host:port) resolved to a sockaddr.
#pragma once

#include <sys/socket.h>

#include <string>

#include "net/endpoint.h"

namespace netdaq::detail::socket_engine {

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;

  int family() const noexcept { return ss.ss_family; }
  const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&ss); }
  uint16_t port() const noexcept;
  void set_port(uint16_t port) noexcept;
  bool is_multicast() const noexcept;
  bool is_any() const noexcept;  // 0.0.0.0 or ::
  std::string to_string() const;  // "1.2.3.4:5" or "[::1]:5"
};

// Parses a URL from the config. Throws Error(invalid_config) naming `context` and `key`.
Endpoint parse_endpoint_or_throw(const std::string& url, const std::string& context, const char* key);

// Resolves ep.host (literal or name) to an address of the endpoint's protocol. passive: a
// local address to bind/listen on. Throws Error(not_found) on a resolution failure.
SockAddr resolve(const Endpoint& ep, bool passive, const std::string& context);

// The local address a socket is bound to.
SockAddr local_address(int fd);

}  // namespace netdaq::detail::socket_engine
