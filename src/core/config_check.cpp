#include "core/config_check.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

std::optional<IpLiteral> parse_ip(const std::string& text) {
  IpLiteral ip;
  ip.family = AF_INET;
  if (inet_pton(AF_INET, text.c_str(), ip.bytes) == 1) return ip;
  ip.family = AF_INET6;
  if (inet_pton(AF_INET6, text.c_str(), ip.bytes) == 1) return ip;
  return std::nullopt;
}

const char* family_name(int family) { return family == AF_INET ? "IPv4" : "IPv6"; }

std::string not_unicast(const IpLiteral& ip) {
  const size_t n = ip.family == AF_INET ? 4 : 16;
  const auto all = [&](unsigned char b) {
    return std::all_of(ip.bytes, ip.bytes + n, [&](unsigned char x) { return x == b; });
  };
  if (all(0)) return "the unspecified address";
  if (ip.family == AF_INET ? (ip.bytes[0] & 0xf0) == 0xe0 : ip.bytes[0] == 0xff) return "a multicast group";
  if (ip.family == AF_INET && all(0xff)) return "the broadcast address";
  return {};
}

bool is_mac(const std::string& s) {
  if (s.size() != 17) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i % 3 == 2 ? s[i] != ':' : std::isxdigit(static_cast<unsigned char>(s[i])) == 0) return false;
  return true;
}

}  // namespace netdaq::detail
