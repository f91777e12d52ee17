#include "net/pci_address.h"

#include <cstdio>

#include "net/hex.h"

namespace netdaq::detail {

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
  const auto d = hex_value(domain), b = hex_value(s.substr(0, 2)), dev = hex_value(s.substr(3, 2));
  if (!d || !b || !dev) return std::nullopt;
  PciAddress a;
  a.domain = static_cast<uint16_t>(*d);
  a.bus = static_cast<uint8_t>(*b);
  a.device = static_cast<uint8_t>(*dev);
  a.function = static_cast<uint8_t>(s[6] - '0');
  return a;
}

}  // namespace netdaq::detail
