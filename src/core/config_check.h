// The validator's shared pieces: where issues are collected and how values are shown.
// Each config_validate_*.cpp checks one part of a Config.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/config_limits.h"
#include "netdaq/config.h"

namespace netdaq::detail {

class Checker {
 public:
  explicit Checker(const Config& cfg) : cfg_(cfg) {}

  const Config& config() const noexcept { return cfg_; }
  // Records a problem with the value at key path `key` (located with Config::location_of).
  void error(const std::string& key, std::string value, std::string message);
  // Reports `value` unless `allowed` contains it.
  template <class T>
  void range(const std::string& key, T value, Range allowed) {
    if constexpr (std::is_signed_v<T>) range_signed(key, value, allowed);
    else range_unsigned(key, value, allowed);
  }

  std::vector<ConfigIssue> take() { return std::move(issues_); }

 private:
  void range_signed(const std::string& key, int64_t value, Range allowed);
  void range_unsigned(const std::string& key, uint64_t value, Range allowed);

  const Config& cfg_;
  std::vector<ConfigIssue> issues_;
};

std::string show(double v);  // shortest text that reads back as v
// A value as shown in a message: cut to 80 characters ("...") so a stray blob stays readable.
std::string shorten(std::string value);
std::string join(std::span<const std::string> items);
// Appends `item` unless it is empty or already there (lists of names for messages).
void add_unique(std::vector<std::string>& items, std::string item);
std::string join(std::span<const std::string_view> items);
// "sensor0/rx1": the queue's name, or the Session's default name for it.
std::string queue_label(const InterfaceConfig& iface, const QueueConfig& q, bool rx);

// Addresses the engines that write their own headers (afxdp, dpdk) take from the config.
struct IpLiteral {
  int family = 0;  // AF_INET or AF_INET6
  unsigned char bytes[16] = {};
};
std::optional<IpLiteral> parse_ip(const std::string& text);  // an IPv4 or IPv6 literal
const char* family_name(int family);                          // "IPv4" / "IPv6"
// What keeps `ip` from addressing one host ("" when nothing does): the unspecified address,
// a multicast group, the broadcast address.
std::string not_unicast(const IpLiteral& ip);
// "02:00:00:00:00:01": six hex bytes separated by ':'.
bool is_mac(const std::string& s);

// The checks, one part of the Config each.
void check_regions(Checker& c);
void check_interfaces(Checker& c);
void check_queues(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_flows(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_reorder(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_socket_engine(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_afxdp_engine(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_dpdk_engine(Checker& c, const InterfaceConfig& iface, const std::string& path);
// eal: (DPDK's environment): its values, and that some interface uses the dpdk engine.
void check_eal(Checker& c);
// socket: / afxdp: / dpdk: options set on an interface whose engine is another one.
void check_other_engine_options(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_pool_budgets(Checker& c);
void check_run_and_log(Checker& c);

}  // namespace netdaq::detail
