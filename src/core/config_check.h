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
#include "net/ip_address.h"
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

  // Records an issue found elsewhere (an application block's check).
  void add(ConfigIssue issue) { issues_.push_back(std::move(issue)); }

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

// Addresses the engines that write their own headers (afxdp, dpdk) take from the config are
// parsed by src/net (parse_ip, parse_mac, parse_endpoint), as the engines parse them.
// What keeps `ip` from addressing one host ("" when nothing does): the unspecified address,
// a multicast group, the broadcast address.
std::string not_unicast(const IpAddress& ip);

// tx.destination of an engine that writes its own Ethernet/IP/UDP headers (afxdp, dpdk): a
// UDP endpoint with a unicast IP literal (IPv4 only when `ipv4_only`) and a port. Reports what
// is wrong under `key`, naming `engine` and the expected `form`; returns the address, or
// nullopt when there is none to use.
std::optional<IpAddress> check_header_destination(Checker& c, const std::string& key, const std::string& url,
                                                  const std::string& engine, const char* form, bool ipv4_only);

// The checks, one part of the Config each.
void check_regions(Checker& c);
void check_interfaces(Checker& c);
void check_queues(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_flows(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_reorder(Checker& c, const InterfaceConfig& iface, const std::string& path);
// Engine option blocks set on an interface whose engine is another one.
void check_other_engine_options(Checker& c, const InterfaceConfig& iface, const std::string& path);
void check_pool_budgets(Checker& c);
void check_log(Checker& c);

}  // namespace netdaq::detail
