#include "net/host_port.h"

#include <charconv>

namespace netdaq::detail {

HostPortError split_host_port(std::string_view s, HostPort& out) noexcept {
  out = HostPort{};
  if (s.starts_with('[')) {
    const size_t close = s.find(']');
    if (close == std::string_view::npos) return HostPortError::unclosed_bracket;
    out.host = s.substr(1, close - 1);
    out.bracketed = true;
    if (close + 1 >= s.size() || s[close + 1] != ':') return HostPortError::no_port_after_v6;
    out.port_text = s.substr(close + 2);
  } else {
    const size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return HostPortError::no_port;
    out.host = s.substr(0, colon);
    out.port_text = s.substr(colon + 1);
    if (out.host.find(':') != std::string_view::npos) return HostPortError::unbracketed_v6;
  }
  unsigned value = 0;
  const auto p = out.port_text;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc{} || end != p.data() + p.size() || value > 65535) return HostPortError::bad_port;
  out.port = static_cast<uint16_t>(value);
  return HostPortError::none;
}

}  // namespace netdaq::detail
