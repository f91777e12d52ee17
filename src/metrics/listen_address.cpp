#include "metrics/listen_address.h"

#include <netdb.h>
#include <sys/socket.h>

#include <charconv>

#include "netdaq/status.h"

namespace netdaq::metrics {

namespace {
[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw Error(Errc::invalid_config, "metrics address '" + std::string(text) + "': " + why +
                                        " (expected HOST:PORT, e.g. 127.0.0.1:9464, [::1]:9464 or :9464)");
}
}  // namespace

ListenAddress parse_listen_address(std::string_view text) {
  ListenAddress a;
  std::string_view host, port;
  if (text.starts_with('[')) {  // [v6]:port
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      bad(text, "an IPv6 address in brackets must be followed by :PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    if (host.empty()) bad(text, "empty IPv6 address");
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) bad(text, "no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) bad(text, "an IPv6 address needs brackets");
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value > 65535)
    bad(text, "port '" + std::string(port) + "' is not a number 0..65535");
  a.host = host.empty() || host == "*" ? "0.0.0.0" : std::string(host);
  a.port = static_cast<uint16_t>(value);
  return a;
}

void check_resolves(const ListenAddress& a, std::string_view text) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(a.host.c_str(), nullptr, &hints, &res);
  if (res) freeaddrinfo(res);
  if (rc != 0)
    throw Error(Errc::not_found, "metrics address '" + std::string(text) + "': host '" + a.host +
                                     "' does not resolve: " + gai_strerror(rc));
}

}  // namespace netdaq::metrics
