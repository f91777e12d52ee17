// MAC addresses from the config and the kernel's neighbour table ("02:00:00:00:00:01"): the
// one parser the validator and the engines share.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netdaq::detail {

using MacAddress = std::array<uint8_t, 6>;

// Exactly six two-digit hex bytes (either case) separated by ':'; nullopt for anything else.
std::optional<MacAddress> parse_mac(std::string_view text);
std::string to_string(const MacAddress& mac);  // "02:00:00:00:00:01" (lower case)

}  // namespace netdaq::detail
