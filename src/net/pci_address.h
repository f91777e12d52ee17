// PCI addresses of NICs ("0000:3b:00.0" or the short "3b:00.0"): the one parser the validator
// (dpdk interfaces' address, eal.allow) and the dpdk engine share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netdaq::detail {

struct PciAddress {
  uint16_t domain = 0;
  uint8_t bus = 0;
  uint8_t device = 0;
  uint8_t function = 0;  // 0..7

  std::string to_string() const;  // canonical "0000:3b:00.0": domain filled in, lower case

  friend bool operator==(const PciAddress&, const PciAddress&) = default;
};

// "DDDD:BB:DD.F" or "BB:DD.F" (domain 0): exactly these digits, in hex (either case), the
// function 0..7; nullopt for anything else.
std::optional<PciAddress> parse_pci(std::string_view text);

}  // namespace netdaq::detail
