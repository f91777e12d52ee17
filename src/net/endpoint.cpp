#include "net/endpoint.h"

#include <charconv>

namespace netdaq::detail {

std::string Endpoint::to_string() const {
  std::string s = protocol == Protocol::udp ? "udp://" : "tcp://";
  s += ipv6 ? "[" + host + "]" : host;
  return s + ":" + std::to_string(port);
}

std::optional<Endpoint> parse_endpoint(std::string_view url, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<Endpoint> {
    if (error) *error = why + " (expected udp://HOST:PORT or tcp://HOST:PORT; IPv6 as udp://[::1]:PORT)";
    return std::nullopt;
  };
  Endpoint ep;
  if (url.starts_with("udp://")) {
    ep.protocol = Protocol::udp;
  } else if (url.starts_with("tcp://")) {
    ep.protocol = Protocol::tcp;
  } else {
    return fail("unknown scheme");
  }
  std::string_view rest = url.substr(6);
  std::string_view port_text;
  if (rest.starts_with("[")) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return fail("missing ']' after IPv6 address");
    ep.host = std::string(rest.substr(1, close - 1));
    ep.ipv6 = true;
    if (rest.substr(close + 1).size() < 2 || rest[close + 1] != ':') return fail("missing :PORT");
    port_text = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) return fail("missing :PORT");
    ep.host = std::string(rest.substr(0, colon));
    if (ep.host.find(':') != std::string::npos) return fail("IPv6 addresses must be in brackets");
    port_text = rest.substr(colon + 1);
  }
  if (ep.host.empty()) return fail("missing host");
  unsigned port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port > 65535)
    return fail("port must be a number 0..65535");
  ep.port = static_cast<uint16_t>(port);

  // In brackets an IPv6 literal; otherwise an IPv4 literal or a host name, resolved when the
  // engine opens the queue (without brackets a host has no ':', so it cannot be IPv6).
  ep.ip = parse_ip(ep.host);
  if (ep.ipv6 && (!ep.ip || !ep.ip->is_v6())) return fail("'" + ep.host + "' is not an IPv6 address");
  ep.multicast = ep.ip && ep.ip->is_multicast();
  return ep;
}

}  // namespace netdaq::detail
