// "HOST:PORT" of MetricsServer, parsed and resolved before anything is bound, so that a bad
// address gets its own clear error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace netdaq::metrics {

struct ListenAddress {
  std::string host;  // without brackets; "0.0.0.0" for ":PORT" and "*:PORT"
  uint16_t port = 0;
};

// Throws Error(invalid_config) when text is not HOST:PORT with a port 0..65535.
ListenAddress parse_listen_address(std::string_view text);
// Throws Error(not_found) when the host does not resolve to a local address to bind.
void check_resolves(const ListenAddress& a, std::string_view text);

}  // namespace netdaq::metrics
