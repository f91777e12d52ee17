// Ethernet/IP/UDP headers, shared by the engines that see whole frames (afxdp, dpdk):
// finding the UDP payload (and the fields flows match on) of a received frame, and writing
// the headers of a frame to send (IPv4, fixed addresses and ports, per-packet lengths).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "net/mac_address.h"

namespace netdaq::detail {

using Mac = MacAddress;  // parse_mac in net/mac_address.h

struct UdpPayload {
  uint32_t offset = 0;  // bytes of headers before the payload
  uint32_t size = 0;    // UDP payload bytes (from the UDP length, not the frame length)
  bool ok = false;      // an Ethernet [802.1Q] IPv4/IPv6 UDP frame that holds its payload
  // Fields flows match on (valid when ok).
  bool ipv6 = false;
  int32_t vlan = -1;         // VLAN id of the (outer) tag; -1 untagged
  uint16_t src_port = 0, dst_port = 0;
  const std::byte* src_ip = nullptr;  // 4 or 16 bytes in the frame, network order
  const std::byte* dst_ip = nullptr;
};

// Never reads past len; rejects truncated headers and UDP lengths beyond the frame.
UdpPayload find_udp_payload(const std::byte* frame, uint32_t len) noexcept;

// Headers for IPv4 UDP frames from one source to one destination.
class Ipv4UdpHeaders {
 public:
  static constexpr uint32_t kSize = 14 + 20 + 8;
  Ipv4UdpHeaders(const Mac& src_mac, const Mac& dst_mac, uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
                 uint16_t dst_port);  // addresses in network order, ports in host order
  // Writes kSize bytes at frame for a payload of payload_size bytes that follows them.
  void write(std::byte* frame, uint16_t payload_size) const noexcept;

 private:
  std::array<std::byte, kSize> bytes_{};
  uint32_t partial_sum_ = 0;  // IPv4 header sum without the total length
};

}  // namespace netdaq::detail
