// The value of a run of hex digits (MAC bytes, PCI address parts), by std::from_chars.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace netdaq::detail {

// nullopt unless `text` is one or more hex digits and nothing else (no sign, no 0x).
inline std::optional<unsigned> hex_value(std::string_view text) noexcept {
  unsigned v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v, 16);
  if (text.empty() || r.ec != std::errc{} || r.ptr != end) return std::nullopt;
  return v;
}

}  // namespace netdaq::detail
