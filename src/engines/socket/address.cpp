#include "engines/socket/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

#include "netdaq/status.h"
#include "util/errno_text.h"

namespace netdaq::detail::socket_engine {

uint16_t SockAddr::port() const noexcept {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

void SockAddr::set_port(uint16_t port) noexcept {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
}

bool SockAddr::is_multicast() const noexcept {
  if (family() == AF_INET)
    return IN_MULTICAST(ntohl(reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr));
  if (family() == AF_INET6) return IN6_IS_ADDR_MULTICAST(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
  return false;
}

bool SockAddr::is_any() const noexcept {
  if (family() == AF_INET) return reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (family() == AF_INET6) return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
  return false;
}

std::string SockAddr::to_string() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(port());
  }
  return "<unknown address family>";
}

Endpoint parse_endpoint_or_throw(const std::string& url, const std::string& context, const char* key) {
  std::string why;
  auto ep = parse_endpoint(url, &why);
  if (!ep) throw Error(Errc::invalid_config, context + ": " + key + " '" + url + "': " + why);
  return *ep;
}

SockAddr resolve(const Endpoint& ep, bool passive, const std::string& context) {
  addrinfo hints{};
  hints.ai_family = ep.ipv6 ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = ep.protocol == Protocol::udp ? SOCK_DGRAM : SOCK_STREAM;
  hints.ai_protocol = ep.protocol == Protocol::udp ? IPPROTO_UDP : IPPROTO_TCP;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(ep.port);
  const int rc = getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || !res) {
    const std::string reason = rc == EAI_SYSTEM ? errno_text(errno) : gai_strerror(rc);
    if (res) freeaddrinfo(res);
    throw Error(Errc::not_found, context + ": cannot resolve host '" + ep.host + "' of " + ep.to_string() + ": " +
                                     reason + " (use an IP literal or a name this host can resolve)");
  }
  // Prefer IPv4 for names that resolve to both (a v4 sender is the common case); a v6
  // literal only resolves to v6.
  const addrinfo* pick = res;
  for (const addrinfo* a = res; a; a = a->ai_next)
    if (a->ai_family == AF_INET) { pick = a; break; }
  SockAddr out;
  std::memcpy(&out.ss, pick->ai_addr, pick->ai_addrlen);
  out.len = static_cast<socklen_t>(pick->ai_addrlen);
  freeaddrinfo(res);
  return out;
}

SockAddr local_address(int fd) {
  SockAddr a;
  a.len = sizeof(a.ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a.ss), &a.len) != 0) a.len = 0;
  return a;
}

}  // namespace netdaq::detail::socket_engine
