#include "core/config_check.h"

#include "net/endpoint.h"

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

std::optional<IpAddress> check_header_destination(Checker& c, const std::string& key, const std::string& url,
                                                  const std::string& engine, const char* form, bool ipv4_only) {
  std::string error;
  const auto ep = parse_endpoint(url, &error);
  if (!ep) {
    c.error(key, url, error);
    return std::nullopt;
  }
  const std::string must = std::string("must be ") + form;
  if (ep->protocol == Protocol::tcp) {
    c.error(key, url, must + ": the " + engine + " engine sends UDP only (TCP needs the socket engine)");
    return std::nullopt;
  }
  if (!ep->ip) {
    c.error(key, url,
            must + " with an IP address, not a host name: the " + engine +
                " engine writes the IP header itself and resolves no names");
    return std::nullopt;
  }
  if (ipv4_only && !ep->ip->is_v4()) {
    c.error(key, url, must + ": the " + engine + " engine writes IPv4 headers only");
    return std::nullopt;
  }
  if (const std::string why = not_unicast(*ep->ip); !why.empty())
    c.error(key, url,
            "must be a unicast address; " + ep->host + " is " + why + " (the " + engine + " engine sends to one host)");
  if (ep->port == 0) c.error(key, url, "must have a port 1..65535 (the UDP destination port)");
  return ep->ip;
}

}  // namespace netdaq::detail
