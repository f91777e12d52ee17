#include "core/config_check.h"

#include <fmt/format.h>

#include <algorithm>

namespace netdaq::detail {

void Checker::error(const std::string& key, std::string value, std::string message) {
  issues_.push_back(ConfigIssue{cfg_.location_of(key), key, shorten(std::move(value)), std::move(message)});
}

void Checker::range_signed(const std::string& key, int64_t value, Range allowed) {
  if (!allowed.contains(value)) error(key, std::to_string(value), allowed.describe());
}

void Checker::range_unsigned(const std::string& key, uint64_t value, Range allowed) {
  if (!allowed.contains(value)) error(key, std::to_string(value), allowed.describe());
}

std::string show(double v) { return fmt::format("{}", v); }

std::string shorten(std::string value) {
  constexpr size_t kMax = 80;
  if (value.size() > kMax) value = value.substr(0, kMax) + "...";
  return value;
}

namespace {
template <class Str>
std::string join_all(std::span<const Str> items) {
  std::string s;
  for (const auto& i : items) {
    if (!s.empty()) s += ", ";
    s += i;
  }
  return s;
}
}  // namespace

std::string join(std::span<const std::string> items) { return join_all(items); }

std::string join(std::span<const std::string_view> items) { return join_all(items); }

void add_unique(std::vector<std::string>& items, std::string item) {
  if (!item.empty() && std::find(items.begin(), items.end(), item) == items.end()) items.push_back(std::move(item));
}

std::string queue_label(const InterfaceConfig& iface, const QueueConfig& q, bool rx) {
  return !q.name.empty() ? q.name : iface.name + (rx ? "/rx" : "/tx") + std::to_string(q.id);
}

std::string not_unicast(const IpAddress& ip) {
  if (ip.is_unspecified()) return "the unspecified address";
  if (ip.is_multicast()) return "a multicast group";
  if (ip.is_broadcast()) return "the broadcast address";
  return {};
}

}  // namespace netdaq::detail
