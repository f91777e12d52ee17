// Ethernet/IP/UDP headers, shared by the engines that see whole frames (afxdp, dpdk):
// finding the UDP payload (and the fields flows match on) of a received frame, and writing
// the headers of a frame to send (IPv4, fixed addresses and ports, per-packet lengths).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/host_device.h"
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

// Never reads past len, nor past the headers (66 bytes at most: the GPU-driven receiver hands
// it a copy of a frame's first 128); rejects truncated headers and UDP lengths beyond the frame.
NDQ_HOST_DEVICE inline UdpPayload find_udp_payload(const std::byte* frame, uint32_t len) noexcept {
  constexpr uint16_t kIpv4 = 0x0800, kIpv6 = 0x86dd, kVlan = 0x8100, kQinQ = 0x88a8;
  constexpr uint8_t kUdp = 17;
  auto load16 = [](const std::byte* p) { return static_cast<uint16_t>((uint32_t(p[0]) << 8) | uint32_t(p[1])); };
  UdpPayload r;
  uint32_t off = 14;
  if (len < off) return r;
  uint16_t type = load16(frame + 12);
  if (type == kVlan || type == kQinQ) {
    if (len < off + 4) return r;
    r.vlan = load16(frame + off) & 0x0fff;
    type = load16(frame + off + 2);
    off += 4;
  }
  if (type == kIpv4) {
    if (len < off + 20) return r;
    const auto vihl = static_cast<uint8_t>(frame[off]);
    const uint32_t ihl = (vihl & 0x0f) * 4u;
    if ((vihl >> 4) != 4 || ihl < 20 || static_cast<uint8_t>(frame[off + 9]) != kUdp) return r;
    if (load16(frame + off + 6) & 0x3fff) return r;  // a fragment
    r.src_ip = frame + off + 12;
    r.dst_ip = frame + off + 16;
    off += ihl;
  } else if (type == kIpv6) {
    if (len < off + 40 || static_cast<uint8_t>(frame[off + 6]) != kUdp) return r;
    r.ipv6 = true;
    r.src_ip = frame + off + 8;
    r.dst_ip = frame + off + 24;
    off += 40;
  } else {
    return r;
  }
  if (len < off + 8) return r;
  const uint32_t udp_len = load16(frame + off + 4);
  if (udp_len < 8 || off + udp_len > len) return r;
  r.src_port = load16(frame + off);
  r.dst_port = load16(frame + off + 2);
  r.offset = off + 8;
  r.size = udp_len - 8;
  r.ok = true;
  return r;
}

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
