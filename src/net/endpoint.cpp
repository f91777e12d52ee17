#include "net/endpoint.h"

#include <charconv>
#include <functional>

namespace netdaq::detail {

std::string Endpoint::to_string() const {
  std::string s = rdma ? "rdma://" : protocol == Protocol::udp ? "udp://" : "tcp://";
  s += ipv6 ? "[" + host + "]" : host;
  return s + ":" + std::to_string(port);
}

namespace {

// HOST:PORT, [V6]:PORT (HOST and [V6] alone when !port_required) after the scheme.
std::optional<Endpoint> parse_host_port(std::string_view rest, Endpoint ep, bool port_required,
                                        const std::function<void(const std::string&)>& fail) {
  std::string_view port_text;
  bool has_port = true;
  if (rest.starts_with("[")) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return fail("missing ']' after IPv6 address"), std::nullopt;
    ep.host = std::string(rest.substr(1, close - 1));
    ep.ipv6 = true;
    has_port = close + 1 < rest.size();
    if (has_port && (rest.substr(close + 1).size() < 2 || rest[close + 1] != ':')) return fail("missing :PORT"), std::nullopt;
    if (has_port) port_text = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    has_port = colon != std::string_view::npos;
    ep.host = std::string(rest.substr(0, has_port ? colon : rest.size()));
    if (has_port && ep.host.find(':') != std::string::npos) return fail("IPv6 addresses must be in brackets"), std::nullopt;
    if (has_port) port_text = rest.substr(colon + 1);
  }
  if (!has_port && port_required) return fail("missing :PORT"), std::nullopt;
  if (ep.host.empty()) return fail("missing host"), std::nullopt;
  unsigned port = 0;
  if (has_port) {
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || port > 65535)
      return fail("port must be a number 0..65535"), std::nullopt;
  }
  ep.port = static_cast<uint16_t>(port);

  // In brackets an IPv6 literal; otherwise an IPv4 literal or a host name, resolved when the
  // engine opens the queue (without brackets a host has no ':', so it cannot be IPv6).
  ep.ip = parse_ip(ep.host);
  if (ep.ipv6 && (!ep.ip || !ep.ip->is_v6())) return fail("'" + ep.host + "' is not an IPv6 address"), std::nullopt;
  ep.multicast = ep.ip && ep.ip->is_multicast();
  return ep;
}

}  // namespace

std::optional<Endpoint> parse_rdma_endpoint(std::string_view url, bool port_required, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error)
      *error = why + (port_required ? " (expected rdma://IP:PORT; IPv6 as rdma://[fd00::1]:PORT)"
                                    : " (expected rdma://IP or rdma://IP:PORT; IPv6 as rdma://[fd00::1])");
  };
  if (!url.starts_with("rdma://")) return fail("unknown scheme"), std::nullopt;
  Endpoint ep;
  ep.rdma = true;
  return parse_host_port(url.substr(7), ep, port_required, fail);
}

std::optional<Endpoint> parse_endpoint(std::string_view url, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = why + " (expected udp://HOST:PORT or tcp://HOST:PORT; IPv6 as udp://[::1]:PORT)";
  };
  Endpoint ep;
  if (url.starts_with("udp://")) {
    ep.protocol = Protocol::udp;
  } else if (url.starts_with("tcp://")) {
    ep.protocol = Protocol::tcp;
  } else {
    return fail("unknown scheme"), std::nullopt;
  }
  return parse_host_port(url.substr(6), ep, true, fail);
}

}  // namespace netdaq::detail
