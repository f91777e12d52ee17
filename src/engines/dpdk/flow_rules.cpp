#include "engines/dpdk/flow_rules.h"

#include <arpa/inet.h>
#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <cstring>
#include <vector>

#include "core/log.h"
#include "net/flow_matcher.h"
#include "netdaq/status.h"

namespace netdaq::detail::dpdk {

namespace {

std::string ports(uint16_t lo, const std::optional<uint16_t>& hi) {
  return std::to_string(lo) + (hi && *hi != lo ? "-" + std::to_string(*hi) : "");
}

// Items of one rule; specs, masks and lasts live here while the rule is validated/created.
struct Pattern {
  rte_flow_item_eth eth_spec{}, eth_mask{};
  rte_flow_item_vlan vlan_spec{}, vlan_mask{};
  rte_flow_item_ipv4 ip4_spec{}, ip4_mask{};
  rte_flow_item_ipv6 ip6_spec{}, ip6_mask{};
  rte_flow_item_udp udp_spec{}, udp_mask{}, udp_last{};
  std::vector<rte_flow_item> items;

  Pattern(const FlowMatch& m, const FlowAddresses& a) {
    items.push_back({RTE_FLOW_ITEM_TYPE_ETH, nullptr, nullptr, nullptr});
    if (m.vlan) {
      vlan_spec.hdr.vlan_tci = rte_cpu_to_be_16(*m.vlan);
      vlan_mask.hdr.vlan_tci = rte_cpu_to_be_16(0x0fff);
      items.push_back({RTE_FLOW_ITEM_TYPE_VLAN, &vlan_spec, nullptr, &vlan_mask});
    }
    // An address of the other family (ip_src IPv4, ip_dst IPv6) stays 0 under its full mask.
    const auto set = [v6 = a.ipv6()](const std::optional<IpAddress>& ip, void* spec, void* mask) {
      if (!ip) return;
      if (ip->is_v6() == v6) std::memcpy(spec, ip->bytes.data(), ip->size());
      std::memset(mask, 0xff, v6 ? 16 : 4);
    };
    if (a.ipv6()) {
      set(a.src, &ip6_spec.hdr.src_addr, &ip6_mask.hdr.src_addr);
      set(a.dst, &ip6_spec.hdr.dst_addr, &ip6_mask.hdr.dst_addr);
      ip6_spec.hdr.proto = IPPROTO_UDP;
      ip6_mask.hdr.proto = 0xff;
      items.push_back({RTE_FLOW_ITEM_TYPE_IPV6, &ip6_spec, nullptr, &ip6_mask});
    } else {
      set(a.src, &ip4_spec.hdr.src_addr, &ip4_mask.hdr.src_addr);
      set(a.dst, &ip4_spec.hdr.dst_addr, &ip4_mask.hdr.dst_addr);
      ip4_spec.hdr.next_proto_id = IPPROTO_UDP;
      ip4_mask.hdr.next_proto_id = 0xff;
      items.push_back({RTE_FLOW_ITEM_TYPE_IPV4, &ip4_spec, nullptr, &ip4_mask});
    }
    bool range = false;
    if (m.udp_src) {
      udp_spec.hdr.src_port = rte_cpu_to_be_16(*m.udp_src);
      udp_mask.hdr.src_port = 0xffff;
      udp_last.hdr.src_port = rte_cpu_to_be_16(m.udp_src_end.value_or(*m.udp_src));
      range |= m.udp_src_end && *m.udp_src_end != *m.udp_src;
    }
    if (m.udp_dst) {
      udp_spec.hdr.dst_port = rte_cpu_to_be_16(*m.udp_dst);
      udp_mask.hdr.dst_port = 0xffff;
      udp_last.hdr.dst_port = rte_cpu_to_be_16(m.udp_dst_end.value_or(*m.udp_dst));
      range |= m.udp_dst_end && *m.udp_dst_end != *m.udp_dst;
    }
    const bool any_port = m.udp_src || m.udp_dst;
    items.push_back({RTE_FLOW_ITEM_TYPE_UDP, any_port ? &udp_spec : nullptr, range ? &udp_last : nullptr,
                     any_port ? &udp_mask : nullptr});
    items.push_back({RTE_FLOW_ITEM_TYPE_END, nullptr, nullptr, nullptr});
  }
};

}  // namespace

std::string describe(const FlowConfig& f) {
  const FlowMatch& m = f.match;
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  if (m.udp_src) add("udp_src " + ports(*m.udp_src, m.udp_src_end));
  if (m.udp_dst) add("udp_dst " + ports(*m.udp_dst, m.udp_dst_end));
  if (m.ip_src) add("ip_src " + *m.ip_src);
  if (m.ip_dst) add("ip_dst " + *m.ip_dst);
  if (m.vlan) add("vlan " + std::to_string(*m.vlan));
  if (s.empty()) s = "any UDP";
  if (f.queues.empty()) {
    s += " -> queue " + std::to_string(f.queue);
  } else {
    s += " -> RSS over queues";
    for (size_t i = 0; i < f.queues.size(); ++i) s += (i ? "," : " ") + std::to_string(f.queues[i]);
  }
  return s;
}

FlowRules::~FlowRules() { clear(); }

void FlowRules::clear() noexcept {
  for (auto& [id, flow] : rules_) {
    rte_flow_error err{};
    if (rte_flow_destroy(port_, flow, &err) != 0)
      log()->warn("{}: cannot remove flow {}: {}", context_, id, err.message ? err.message : "?");
  }
  rules_.clear();
}

void FlowRules::add(const FlowConfig& f) {
  if (rules_.count(f.id))
    throw Error(Errc::state, context_ + ": flow " + std::to_string(f.id) + " is already steered; remove it first");
  Pattern pattern(f.match, flow_addresses(f));  // throws for an address the validator refuses
  rte_flow_attr attr{};
  attr.ingress = 1;
  std::vector<rte_flow_action> actions;
  rte_flow_action_queue queue{f.queue};
  rte_flow_action_rss rss{};
  if (f.queues.empty()) {
    actions.push_back({RTE_FLOW_ACTION_TYPE_QUEUE, &queue});
  } else {
    rss.func = RTE_ETH_HASH_FUNCTION_DEFAULT;
    rss.types = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP;
    rss.queue_num = static_cast<uint32_t>(f.queues.size());
    rss.queue = f.queues.data();
    actions.push_back({RTE_FLOW_ACTION_TYPE_RSS, &rss});
  }
  actions.push_back({RTE_FLOW_ACTION_TYPE_END, nullptr});
  rte_flow_error err{};
  rte_flow* flow = nullptr;
  if (rte_flow_validate(port_, &attr, pattern.items.data(), actions.data(), &err) == 0)
    flow = rte_flow_create(port_, &attr, pattern.items.data(), actions.data(), &err);
  if (!flow)
    throw Error(Errc::unsupported, context_ + ": flow " + std::to_string(f.id) + " (" + describe(f) + "): driver " +
                                       driver_ + " cannot steer it: " +
                                       (err.message ? err.message : rte_strerror(rte_errno)) + " (rte_flow error type " +
                                       std::to_string(static_cast<int>(err.type)) + ")");
  rules_[f.id] = flow;
}

void FlowRules::remove(uint32_t id) {
  auto it = rules_.find(id);
  if (it == rules_.end()) throw Error(Errc::not_found, context_ + ": no flow " + std::to_string(id) + " is steered");
  rte_flow_error err{};
  if (rte_flow_destroy(port_, it->second, &err) != 0)
    throw Error(Errc::system, context_ + ": driver " + driver_ + " cannot remove flow " + std::to_string(id) + ": " +
                                  (err.message ? err.message : rte_strerror(rte_errno)));
  rules_.erase(it);
}

}  // namespace netdaq::detail::dpdk
