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


constexpr uint16_t kIpv4 = 0x0800;
constexpr uint8_t kUdp = 17;

}  // namespace

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
