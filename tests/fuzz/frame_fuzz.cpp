// libFuzzer target: find_udp_payload, the received-frame parser of the afxdp and dpdk engines,
// and the flow matcher that classifies what it returns (dpdk's software flow matching).
//
// Each input is one received Ethernet frame. The parser must never read past the frame (the
// frame is copied into a heap buffer of exactly its size, so AddressSanitizer sees any read
// past its end), and every field it returns must describe bytes inside the frame:
//   - ok: the payload [offset, offset + size) lies in the frame, after the Ethernet, IP and UDP
//     headers; the UDP header sits just before it and says size + 8; src_ip and dst_ip point at
//     4 (IPv4) or 16 (IPv6) bytes inside the IP header; vlan is -1 or a 12-bit id.
//   - not ok: any address pointer it did set still points inside the frame.
// It is also run the way dpdk's header-data split calls it: with the whole packet's length
// but only the first segment (128 bytes) readable; it must read nothing past those and find the
// same fields. Last, the flow matcher: a fixed rule set (IPv4, IPv6, VLAN, port ranges) must
// pick the first rule that matches, and a rule made of the frame's own fields must match it.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "net/flow_matcher.h"
#include "net/frame_headers.h"
#include "netdaq/config.h"

namespace {

using netdaq::detail::FlowMatcher;
using netdaq::detail::FlowRule;
using netdaq::detail::UdpPayload;

// dpdk's split rx: the parser gets the packet's length but reads the first segment only.
constexpr uint32_t kFirstSegment = 128;
constexpr uint32_t kEth = 14, kVlanTag = 4, kIpv4Min = 20, kIpv4Max = 60, kIpv6 = 40, kUdp = 8;

[[noreturn]] void fail(const char* what, const UdpPayload& u, size_t size) {
  std::fprintf(stderr, "frame_fuzz: %s (frame %zu bytes; ok=%d offset=%u size=%u ipv6=%d vlan=%d ports=%u>%u)\n", what,
               size, u.ok, u.offset, u.size, u.ipv6, u.vlan, u.src_port, u.dst_port);
  std::abort();
}
#define CHECK(cond, u, size)         \
  do {                               \
    if (!(cond)) fail(#cond, u, size); \
  } while (0)

uint16_t be16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return ntohs(v);
}

// [p, p + n) lies inside [lo, hi); compares addresses as integers (no pointer UB).
bool inside(const std::byte* p, size_t n, const std::byte* lo, const std::byte* hi) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const auto l = reinterpret_cast<uintptr_t>(lo), h = reinterpret_cast<uintptr_t>(hi);
  return a >= l && a <= h && n <= h - a;
}

size_t rel(const std::byte* p, const std::byte* frame) {
  return p ? static_cast<size_t>(reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(frame)) : SIZE_MAX;
}

void check_fields(const UdpPayload& u, const std::byte* frame, size_t size) {
  const std::byte* end = frame + size;
  const size_t ip_bytes = u.ipv6 ? 16 : 4;
  CHECK(u.vlan >= -1 && u.vlan <= 0x0fff, u, size);
  // Whatever the parser set before giving up must still lie in the frame.
  CHECK(!u.src_ip || inside(u.src_ip, ip_bytes, frame, end), u, size);
  CHECK(!u.dst_ip || inside(u.dst_ip, ip_bytes, frame, end), u, size);
  if (!u.ok) return;

  // The payload: inside the frame, after at least Ethernet + IPv4 + UDP headers and at most
  // Ethernet + VLAN tag + IPv4 with options + UDP.
  CHECK(u.offset >= kEth + kIpv4Min + kUdp, u, size);
  CHECK(u.offset <= kEth + kVlanTag + (u.ipv6 ? kIpv6 : kIpv4Max) + kUdp, u, size);
  CHECK(u.offset <= size, u, size);
  CHECK(u.size <= size - u.offset, u, size);
  CHECK(inside(frame + u.offset, u.size, frame, end), u, size);

  // The UDP header just before the payload holds the ports and the length returned.
  const std::byte* udp = frame + u.offset - kUdp;
  CHECK(be16(udp) == u.src_port, u, size);
  CHECK(be16(udp + 2) == u.dst_port, u, size);
  CHECK(be16(udp + 4) == u.size + kUdp, u, size);

  // The addresses: set, inside the IP header (before the UDP header), not overlapping.
  CHECK(u.src_ip && u.dst_ip, u, size);
  CHECK(inside(u.src_ip, ip_bytes, frame + kEth, udp), u, size);
  CHECK(inside(u.dst_ip, ip_bytes, frame + kEth, udp), u, size);
  CHECK(u.dst_ip == u.src_ip + ip_bytes, u, size);

  // Ethernet type, VLAN tag and IP header agree with what was returned.
  const bool tagged = u.vlan >= 0;
  const uint16_t outer = be16(frame + 12);
  CHECK(tagged == (outer == 0x8100 || outer == 0x88a8), u, size);
  const uint32_t l3 = kEth + (tagged ? kVlanTag : 0);
  if (tagged) CHECK(u.vlan == (be16(frame + kEth) & 0x0fff), u, size);
  const uint16_t type = be16(frame + l3 - 2);
  const auto* ip = frame + l3;
  if (u.ipv6) {
    CHECK(type == 0x86dd, u, size);
    CHECK(static_cast<uint8_t>(ip[6]) == 17, u, size);
    CHECK(u.offset == l3 + kIpv6 + kUdp, u, size);
    CHECK(u.src_ip == ip + 8, u, size);
  } else {
    CHECK(type == 0x0800, u, size);
    const auto vihl = static_cast<uint8_t>(ip[0]);
    CHECK((vihl >> 4) == 4 && (vihl & 0x0f) >= 5, u, size);
    CHECK(static_cast<uint8_t>(ip[9]) == 17, u, size);
    CHECK((be16(ip + 6) & 0x3fff) == 0, u, size);  // not a fragment
    CHECK(u.offset == l3 + (vihl & 0x0fu) * 4 + kUdp, u, size);
    CHECK(u.src_ip == ip + 12, u, size);
  }
}

bool same(const UdpPayload& a, const std::byte* fa, const UdpPayload& b, const std::byte* fb) {
  if (a.ok != b.ok) return false;
  if (!a.ok) return true;
  return a.offset == b.offset && a.size == b.size && a.ipv6 == b.ipv6 && a.vlan == b.vlan &&
         a.src_port == b.src_port && a.dst_port == b.dst_port && rel(a.src_ip, fa) == rel(b.src_ip, fb) &&
         rel(a.dst_ip, fa) == rel(b.dst_ip, fb);
}

netdaq::FlowConfig flow(uint32_t id, void (*set)(netdaq::FlowMatch&)) {
  netdaq::FlowConfig f;
  f.id = id;
  f.queue = static_cast<uint16_t>(id % 4);
  set(f.match);
  return f;
}

// Rules of every kind, ordered so that later ones are reached only when earlier ones miss;
// the seed corpus holds frames that match several of them.
const FlowMatcher& matcher() {
  static const FlowMatcher m(std::vector<netdaq::FlowConfig>{
      flow(1, [](netdaq::FlowMatch& f) { f.vlan = 100; f.udp_dst = 6000; f.udp_dst_end = 6100; }),
      flow(2, [](netdaq::FlowMatch& f) { f.ip_src = "10.0.0.1"; f.udp_src = 4000; f.udp_src_end = 4010; }),
      flow(3, [](netdaq::FlowMatch& f) { f.ip_src = "fd00::1"; f.ip_dst = "fd00::2"; }),
      flow(4, [](netdaq::FlowMatch& f) { f.ip_dst = "fd00::2"; f.udp_dst = 5000; }),
      flow(5, [](netdaq::FlowMatch& f) { f.ip_dst = "10.0.0.2"; }),
      flow(6, [](netdaq::FlowMatch& f) { f.vlan = 0; }),
      flow(7, [](netdaq::FlowMatch& f) { f.udp_dst = 5000; }),
  });
  return m;
}

void check_flows(const UdpPayload& u, size_t size) {
  const FlowMatcher& m = matcher();
  const int k = m.match(u);
  CHECK(k >= -1 && k < static_cast<int>(m.rules().size()), u, size);
  if (!u.ok) {
    CHECK(k == -1, u, size);
    return;
  }
  for (int i = 0; i < (k < 0 ? static_cast<int>(m.rules().size()) : k); ++i)
    CHECK(!m.rules()[static_cast<size_t>(i)].matches(u), u, size);
  if (k >= 0) CHECK(m.rules()[static_cast<size_t>(k)].matches(u), u, size);

  // A rule made of the frame's own fields matches it; a different VLAN or address does not.
  FlowRule own;
  own.src_lo = own.src_hi = u.src_port;
  own.dst_lo = own.dst_hi = u.dst_port;
  own.src_family = own.dst_family = u.ipv6 ? 6 : 4;
  std::memcpy(own.src_ip.data(), u.src_ip, u.ipv6 ? 16 : 4);
  std::memcpy(own.dst_ip.data(), u.dst_ip, u.ipv6 ? 16 : 4);
  own.vlan = u.vlan;
  CHECK(own.matches(u), u, size);
  FlowRule other_vlan = own;
  other_vlan.vlan = u.vlan < 0 ? 0 : (u.vlan + 1) & 0x0fff;
  CHECK(!other_vlan.matches(u), u, size);
  FlowRule other_family = own;
  other_family.dst_family = u.ipv6 ? 4 : 6;
  CHECK(!other_family.matches(u), u, size);
  FlowRule other_ip = own;
  other_ip.src_ip[0] ^= std::byte{1};
  CHECK(!other_ip.matches(u), u, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > UINT32_MAX) return 0;
  const auto len = static_cast<uint32_t>(size);

  // The whole frame, in a buffer of exactly its size (ASan: any read past it is an error).
  const std::unique_ptr<std::byte[]> frame(new std::byte[size]);
  if (size) std::memcpy(frame.get(), data, size);
  const UdpPayload u = netdaq::detail::find_udp_payload(frame.get(), len);
  check_fields(u, frame.get(), size);
  check_flows(u, size);

  // dpdk's header-data split: the length of the whole packet, only the first segment readable.
  if (size > kFirstSegment) {
    const std::unique_ptr<std::byte[]> seg(new std::byte[kFirstSegment]);
    std::memcpy(seg.get(), data, kFirstSegment);
    const UdpPayload s = netdaq::detail::find_udp_payload(seg.get(), len);
    CHECK(same(s, seg.get(), u, frame.get()), s, size);
    CHECK(!s.src_ip || inside(s.src_ip, s.ipv6 ? 16 : 4, seg.get(), seg.get() + kFirstSegment), s, size);
    CHECK(!s.dst_ip || inside(s.dst_ip, s.ipv6 ? 16 : 4, seg.get(), seg.get() + kFirstSegment), s, size);
    CHECK(!s.ok || s.offset <= kFirstSegment, s, size);
  }
  return 0;
}
