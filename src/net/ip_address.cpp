#include "net/ip_address.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace netdaq::detail {

const char* family_name(IpFamily family) { return family == IpFamily::v4 ? "IPv4" : "IPv6"; }

int IpAddress::af() const noexcept { return is_v4() ? AF_INET : AF_INET6; }

uint32_t IpAddress::v4_network_order() const noexcept {
  uint32_t v;
  std::memcpy(&v, bytes.data(), 4);
  return v;
}

bool IpAddress::is_unspecified() const noexcept {
  return std::all_of(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size()),
                     [](uint8_t b) { return b == 0; });
}

bool IpAddress::is_multicast() const noexcept { return is_v4() ? (bytes[0] & 0xf0) == 0xe0 : bytes[0] == 0xff; }

bool IpAddress::is_broadcast() const noexcept {
  return is_v4() && std::all_of(bytes.begin(), bytes.begin() + 4, [](uint8_t b) { return b == 0xff; });
}

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (!inet_ntop(af(), bytes.data(), buf, sizeof buf)) return "?";
  return buf;
}

std::optional<IpAddress> parse_ip(std::string_view text) {
  // inet_pton reads a C string: a text with a NUL inside is not an address.
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string s(text);
  IpAddress ip;
  ip.family = IpFamily::v4;
  if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) == 1) return ip;
  ip.bytes = {};
  ip.family = IpFamily::v6;
  if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) == 1) return ip;
  return std::nullopt;
}

std::optional<IpAddress> parse_ipv4(std::string_view text) {
  auto ip = parse_ip(text);
  if (!ip || !ip->is_v4()) return std::nullopt;
  return ip;
}

}  // namespace netdaq::detail
