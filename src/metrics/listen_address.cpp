#include "metrics/listen_address.h"

#include <netdb.h>
#include <sys/socket.h>

#include "net/host_port.h"
#include "netdaq/status.h"

namespace netdaq::metrics {

namespace {
[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw Error(Errc::invalid_config, "metrics address '" + std::string(text) + "': " + why +
                                        " (expected HOST:PORT, e.g. 127.0.0.1:9464, [::1]:9464 or :9464)");
}
}  // namespace

ListenAddress parse_listen_address(std::string_view text) {
  detail::HostPort hp;
  switch (detail::split_host_port(text, hp)) {
    case detail::HostPortError::none: break;
    case detail::HostPortError::unclosed_bracket:
    case detail::HostPortError::no_port_after_v6:
      bad(text, "an IPv6 address in brackets must be followed by :PORT");
    case detail::HostPortError::no_port: bad(text, "no port");
    case detail::HostPortError::unbracketed_v6: bad(text, "an IPv6 address needs brackets");
    case detail::HostPortError::bad_port:
      if (hp.bracketed && hp.host.empty()) bad(text, "empty IPv6 address");
      bad(text, "port '" + std::string(hp.port_text) + "' is not a number 0..65535");
  }
  if (hp.bracketed && hp.host.empty()) bad(text, "empty IPv6 address");
  ListenAddress a;
  a.host = hp.host.empty() || hp.host == "*" ? "0.0.0.0" : std::string(hp.host);
  a.port = hp.port;
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
