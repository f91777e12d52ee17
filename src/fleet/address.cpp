// Address parsing for fleet endpoints: "HOST:PORT" and "[v6]:PORT", and comma-separated lists.
#include <stdexcept>
#include <string>

#include "net/host_port.h"
#include "netdaq/fleet.h"

namespace netdaq::fleet {

namespace {
[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw std::invalid_argument("fleet address '" + std::string(text) + "': " + why +
                              " (allowed: HOST:PORT or [IPv6]:PORT, port 0..65535)");
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::string Address::text() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Address parse_address(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) bad(text, "empty");
  detail::HostPort hp;
  switch (detail::split_host_port(s, hp)) {
    case detail::HostPortError::none: break;
    case detail::HostPortError::unclosed_bracket: bad(text, "'[' without ']'");
    case detail::HostPortError::no_port_after_v6: bad(text, "no ':PORT' after ']'");
    case detail::HostPortError::no_port: bad(text, "no ':PORT'");
    case detail::HostPortError::unbracketed_v6: bad(text, "an IPv6 host needs [brackets]");
    case detail::HostPortError::bad_port:
      if (hp.host.empty()) bad(text, "empty host");
      bad(text, "port '" + std::string(hp.port_text) + "' is not a number 0..65535");
  }
  if (hp.host.empty()) bad(text, "empty host");
  return Address{std::string(hp.host), hp.port};
}

std::vector<Address> parse_address_list(std::string_view text) {
  std::vector<Address> out;
  std::string_view rest = text;
  while (true) {
    auto comma = rest.find(',');
    out.push_back(parse_address(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

const char* to_string(Transport t) noexcept {
  switch (t) {
    case Transport::automatic: return "automatic";
    case Transport::tcp: return "tcp";
    case Transport::shm: return "shm";
  }
  return "?";
}
const char* to_string(Route r) noexcept {
  switch (r) {
    case Route::frame: return "frame";
    case Route::stream: return "stream";
    case Route::bytes: return "bytes";
  }
  return "?";
}
const char* to_string(WhenFull w) noexcept {
  switch (w) {
    case WhenFull::drop: return "drop";
    case WhenFull::wait: return "wait";
  }
  return "?";
}

}  // namespace netdaq::fleet
