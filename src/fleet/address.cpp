// Address parsing for fleet endpoints: "HOST:PORT" and "[v6]:PORT", and comma-separated lists.
#include <charconv>
#include <stdexcept>
#include <string>

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
  Address a;
  std::string_view port;
  if (s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string_view::npos) bad(text, "'[' without ']'");
    a.host = std::string(s.substr(1, close - 1));
    if (close + 1 >= s.size() || s[close + 1] != ':') bad(text, "no ':PORT' after ']'");
    port = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos) bad(text, "no ':PORT'");
    if (s.substr(0, colon).find(':') != std::string_view::npos) bad(text, "an IPv6 host needs [brackets]");
    a.host = std::string(s.substr(0, colon));
    port = s.substr(colon + 1);
  }
  if (a.host.empty()) bad(text, "empty host");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
    bad(text, "port '" + std::string(port) + "' is not a number 0..65535");
  a.port = static_cast<uint16_t>(value);
  return a;
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
