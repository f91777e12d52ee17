// IP address literals from the config ("10.0.0.1", "fd00::1", "::ffff:1.2.3.4"): the one
// parser the validator and the engines share, so a literal means the same thing to both.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netdaq::detail {

enum class IpFamily : uint8_t { v4, v6 };

const char* family_name(IpFamily family);  // "IPv4" / "IPv6"

struct IpAddress {
  IpFamily family = IpFamily::v4;
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 in the first 4 (the rest 0)

  bool is_v4() const noexcept { return family == IpFamily::v4; }
  bool is_v6() const noexcept { return family == IpFamily::v6; }
  size_t size() const noexcept { return is_v4() ? 4 : 16; }  // address bytes used
  int af() const noexcept;                                   // AF_INET / AF_INET6
  uint32_t v4_network_order() const noexcept;                // the IPv4 address as in_addr.s_addr
  bool is_unspecified() const noexcept;                      // 0.0.0.0 or ::
  bool is_multicast() const noexcept;                        // 224.0.0.0/4 or ff00::/8
  bool is_broadcast() const noexcept;                        // 255.255.255.255
  std::string to_string() const;                             // inet_ntop's form ("fd00::1")

  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

// An IPv4 literal (dotted quad: "1.2.3" and "01.2.3.4" are refused) or an IPv6 literal
// (without brackets or zone); nullopt for anything else, host names included.
std::optional<IpAddress> parse_ip(std::string_view text);
// parse_ip, IPv4 only.
std::optional<IpAddress> parse_ipv4(std::string_view text);

}  // namespace netdaq::detail
