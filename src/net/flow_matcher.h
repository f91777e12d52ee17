// Matches parsed frames against the config's flows in order (first match wins), as afxdp's
// eBPF program does in the kernel; engines that classify in software use it (dpdk: flow ids
// and the count of packets that reached the wrong queue).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "net/frame_headers.h"
#include "net/ip_address.h"
#include "netdaq/config.h"

namespace netdaq::detail {

// A flow's match.ip_src / match.ip_dst, parsed (parse_ip, as the validator checks them): the
// one reading of them for every engine that steers or classifies flows (afxdp's eBPF rules,
// dpdk's rte_flow rules, the software matcher). nullopt: the field is not set.
struct FlowAddresses {
  std::optional<IpAddress> src, dst;
  // Whether the rule matches IPv6 (either address is IPv6), not IPv4.
  bool ipv6() const noexcept { return (src && src->is_v6()) || (dst && dst->is_v6()); }
};
// Throws Error(invalid_config) naming the flow when an address does not parse (the validator
// refuses such a config first).
FlowAddresses flow_addresses(const FlowConfig& flow);

struct FlowRule {
  uint32_t id = 0;
  std::vector<uint16_t> queues;         // queues the flow may arrive on (one, or RSS's set)
  uint16_t src_lo = 0, src_hi = 0xffff;  // inclusive port ranges
  uint16_t dst_lo = 0, dst_hi = 0xffff;
  uint8_t src_family = 0, dst_family = 0;  // 0 any, 4, 6
  std::array<std::byte, 16> src_ip{}, dst_ip{};
  int32_t vlan = -1;                    // -1 any

  bool matches(const UdpPayload& u) const noexcept;
  bool delivers_to(uint16_t queue) const noexcept;
};

// Throws Error(invalid_config) naming the flow when an address does not parse.
FlowRule compile_flow(const FlowConfig& flow);

class FlowMatcher {
 public:
  FlowMatcher() = default;
  explicit FlowMatcher(const std::vector<FlowConfig>& flows);
  // Index of the first matching rule, or -1.
  int match(const UdpPayload& u) const noexcept {
    for (size_t i = 0; i < rules_.size(); ++i)
      if (rules_[i].matches(u)) return static_cast<int>(i);
    return -1;
  }
  const std::vector<FlowRule>& rules() const noexcept { return rules_; }
  bool empty() const noexcept { return rules_.empty(); }

 private:
  std::vector<FlowRule> rules_;
};

}  // namespace netdaq::detail
