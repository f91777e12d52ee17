#include "net/mac_address.h"

#include <cstdio>

#include "net/hex.h"

namespace netdaq::detail {

std::optional<MacAddress> parse_mac(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddress mac{};
  for (size_t i = 0; i < 6; ++i) {
    const size_t at = i * 3;
    if (i > 0 && text[at - 1] != ':') return std::nullopt;
    const auto byte = hex_value(text.substr(at, 2));
    if (!byte) return std::nullopt;
    mac[i] = static_cast<uint8_t>(*byte);
  }
  return mac;
}

std::string to_string(const MacAddress& mac) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
  return buf;
}

}  // namespace netdaq::detail
