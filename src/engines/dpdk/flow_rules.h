// The config's flows as rte_flow rules on a port: pattern ETH [/ VLAN] / IPV4|IPV6 / UDP,
// action QUEUE (one queue) or RSS (several); created, listed and destroyed at run time.
#pragma once

#include <rte_flow.h>

#include <cstdint>
#include <map>
#include <string>

#include "netdaq/config.h"

namespace netdaq::detail::dpdk {

class FlowRules {
 public:
  FlowRules(uint16_t port, std::string driver, std::string context) noexcept
      : port_(port), driver_(std::move(driver)), context_(std::move(context)) {}
  ~FlowRules();
  FlowRules(const FlowRules&) = delete;
  FlowRules& operator=(const FlowRules&) = delete;

  // Throws Error(unsupported) naming the rule, the driver and what the driver said; Error(state)
  // when the id is taken.
  void add(const FlowConfig& flow);
  void remove(uint32_t id);  // throws Error(not_found)
  bool has(uint32_t id) const noexcept { return rules_.count(id) != 0; }
  void clear() noexcept;

 private:
  uint16_t port_;
  std::string driver_;
  std::string context_;
  std::map<uint32_t, rte_flow*> rules_;
};

// "udp_dst 5000-5003, ip_dst 10.0.0.2 -> queue 1" (for messages).
std::string describe(const FlowConfig& flow);

}  // namespace netdaq::detail::dpdk
