#include "net/pci_address.h"

#include <cstdio>

namespace netdaq::detail {

namespace {
int hex_digit(char ch) noexcept {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

// The value of `text`, all hex digits; nullopt if one is not.
std::optional<unsigned> hex(std::string_view text) noexcept {
  unsigned v = 0;
  for (char ch : text) {
    const int d = hex_digit(ch);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<unsigned>(d);
  }
  return v;
}
}  // namespace

std::string PciAddress::to_string() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", unsigned{domain}, unsigned{bus}, unsigned{device},
                unsigned{function});
  return buf;
}

std::optional<PciAddress> parse_pci(std::string_view s) {
  std::string_view domain = "0000";
  if (s.size() == 12) {
    if (s[4] != ':') return std::nullopt;
    domain = s.substr(0, 4);
    s.remove_prefix(5);
  }
  if (s.size() != 7 || s[2] != ':' || s[5] != '.' || s[6] < '0' || s[6] > '7') return std::nullopt;
  const auto d = hex(domain), b = hex(s.substr(0, 2)), dev = hex(s.substr(3, 2));
  if (!d || !b || !dev) return std::nullopt;
  PciAddress a;
  a.domain = static_cast<uint16_t>(*d);
  a.bus = static_cast<uint8_t>(*b);
  a.device = static_cast<uint8_t>(*dev);
  a.function = static_cast<uint8_t>(s[6] - '0');
  return a;
}

}  // namespace netdaq::detail
