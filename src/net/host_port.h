// "HOST:PORT" and "[V6]:PORT" split into host and port, the one splitter behind the metrics
// server's listen address and the fleet's addresses. Each caller words its own errors (and
// decides what an empty host means), so this returns what went wrong, not a message.
#pragma once

#include <cstdint>
#include <string_view>

namespace netdaq::detail {

enum class HostPortError : uint8_t {
  none,
  no_port,             // no ':' at all
  unclosed_bracket,    // '[' without ']'
  no_port_after_v6,    // "[V6]" not followed by ":PORT"
  unbracketed_v6,      // a ':' in the host: IPv6 needs brackets
  bad_port,            // PORT is not a number 0..65535
};

struct HostPort {
  std::string_view host;       // without brackets; may be empty
  std::string_view port_text;  // as written
  uint16_t port = 0;
  bool bracketed = false;      // written "[V6]"
};

HostPortError split_host_port(std::string_view text, HostPort& out) noexcept;

}  // namespace netdaq::detail
