#include "net/flow_matcher.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "netdaq/status.h"

namespace netdaq::detail {

namespace {
std::optional<IpAddress> match_ip(const std::optional<std::string>& text, const FlowConfig& f, const char* key) {
  if (!text) return std::nullopt;
  if (auto ip = parse_ip(*text)) return ip;
  throw Error(Errc::invalid_config, "flow " + std::to_string(f.id) + ": match." + key + " '" + *text +
                                        "' is not an IPv4 or IPv6 address");
}

void set_ip(const std::optional<IpAddress>& ip, uint8_t& family, std::array<std::byte, 16>& out) noexcept {
  if (!ip) return;
  family = ip->is_v4() ? 4 : 6;
  std::memcpy(out.data(), ip->bytes.data(), 16);
}

bool ip_matches(uint8_t family, const std::array<std::byte, 16>& want, bool ipv6, const std::byte* have) noexcept {
  if (family == 0) return true;
  if ((family == 6) != ipv6) return false;
  return std::memcmp(want.data(), have, family == 6 ? 16 : 4) == 0;
}
}  // namespace

bool FlowRule::matches(const UdpPayload& u) const noexcept {
  return u.ok && u.src_port >= src_lo && u.src_port <= src_hi && u.dst_port >= dst_lo && u.dst_port <= dst_hi &&
         (vlan < 0 || vlan == u.vlan) && ip_matches(src_family, src_ip, u.ipv6, u.src_ip) &&
         ip_matches(dst_family, dst_ip, u.ipv6, u.dst_ip);
}

bool FlowRule::delivers_to(uint16_t queue) const noexcept {
  return std::find(queues.begin(), queues.end(), queue) != queues.end();
}

FlowAddresses flow_addresses(const FlowConfig& f) {
  return FlowAddresses{match_ip(f.match.ip_src, f, "ip_src"), match_ip(f.match.ip_dst, f, "ip_dst")};
}

FlowRule compile_flow(const FlowConfig& f) {
  FlowRule r;
  r.id = f.id;
  r.queues = f.queues.empty() ? std::vector<uint16_t>{f.queue} : f.queues;
  const FlowMatch& m = f.match;
  if (m.udp_src) r.src_lo = r.src_hi = *m.udp_src;
  if (m.udp_src_end) r.src_hi = *m.udp_src_end;
  if (m.udp_dst) r.dst_lo = r.dst_hi = *m.udp_dst;
  if (m.udp_dst_end) r.dst_hi = *m.udp_dst_end;
  const FlowAddresses a = flow_addresses(f);
  set_ip(a.src, r.src_family, r.src_ip);
  set_ip(a.dst, r.dst_family, r.dst_ip);
  if (m.vlan) r.vlan = *m.vlan;
  return r;
}

FlowMatcher::FlowMatcher(const std::vector<FlowConfig>& flows) {
  for (const auto& f : flows) rules_.push_back(compile_flow(f));
}

}  // namespace netdaq::detail
