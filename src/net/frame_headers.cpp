#include "net/frame_headers.h"

#include <arpa/inet.h>

#include <cstring>

namespace netdaq::detail {

namespace {

uint16_t load16(const std::byte* p) noexcept {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return ntohs(v);
}
void store16(std::byte* p, uint16_t host) noexcept {
  const uint16_t v = htons(host);
  std::memcpy(p, &v, 2);
}
uint16_t fold(uint32_t sum) noexcept {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

constexpr uint16_t kIpv4 = 0x0800, kIpv6 = 0x86dd, kVlan = 0x8100, kQinQ = 0x88a8;
constexpr uint8_t kUdp = 17;

}  // namespace

UdpPayload find_udp_payload(const std::byte* frame, uint32_t len) noexcept {
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

Ipv4UdpHeaders::Ipv4UdpHeaders(const Mac& src_mac, const Mac& dst_mac, uint32_t src_ip, uint32_t dst_ip,
                               uint16_t src_port, uint16_t dst_port) {
  std::byte* p = bytes_.data();
  std::memcpy(p, dst_mac.data(), 6);
  std::memcpy(p + 6, src_mac.data(), 6);
  store16(p + 12, kIpv4);
  std::byte* ip = p + 14;
  ip[0] = std::byte{0x45};
  store16(ip + 6, 0x4000);  // don't fragment
  ip[8] = std::byte{64};    // TTL
  ip[9] = std::byte{kUdp};
  std::memcpy(ip + 12, &src_ip, 4);
  std::memcpy(ip + 16, &dst_ip, 4);
  for (int i = 0; i < 20; i += 2) partial_sum_ += load16(ip + i);
  std::byte* udp = ip + 20;
  store16(udp, src_port);
  store16(udp + 2, dst_port);  // length per packet; checksum 0 (none, allowed for IPv4)
}

void Ipv4UdpHeaders::write(std::byte* frame, uint16_t payload_size) const noexcept {
  std::memcpy(frame, bytes_.data(), kSize);
  const uint16_t ip_len = static_cast<uint16_t>(20 + 8 + payload_size);
  store16(frame + 14 + 2, ip_len);
  store16(frame + 14 + 10, static_cast<uint16_t>(~fold(partial_sum_ + ip_len)));
  store16(frame + 14 + 20 + 4, static_cast<uint16_t>(8 + payload_size));
}

}  // namespace netdaq::detail
