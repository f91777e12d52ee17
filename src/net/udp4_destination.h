// The addresses an engine that writes its own IPv4/UDP headers (afxdp, dpdk) needs from the
// config: tx.destination as udp://IPV4:PORT, and IPv4 / MAC options. Errors name the key.
#pragma once

#include <cstdint>
#include <string>

#include "net/frame_headers.h"

namespace netdaq::detail {

struct Udp4Destination {
  uint32_t ip = 0;     // network order
  uint16_t port = 0;   // host order
};

// Throws Error(invalid_config / unsupported) naming the url and the engine.
Udp4Destination udp4_destination(const std::string& url, const std::string& engine, const std::string& context);
// An IPv4 option (network order); throws Error(invalid_config) naming key.
uint32_t ipv4_option(const std::string& text, const std::string& key, const std::string& context);
// A MAC option; throws Error(invalid_config) naming key.
Mac mac_option(const std::string& text, const std::string& key, const std::string& context);

}  // namespace netdaq::detail
