#include "fleet/net_devices.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "fleet/ucx_context.h"

namespace netdaq::fleet::detail {

namespace {

bool same_ip(const sockaddr* a, const sockaddr_storage& b) {
  if (!a || a->sa_family != b.ss_family) return false;
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr, sizeof(in6_addr)) == 0;
  return false;
}

// The device holding a local address; "" if none.
std::string device_with(const sockaddr_storage& local) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i && name.empty(); i = i->ifa_next)
    if (same_ip(i->ifa_addr, local)) name = i->ifa_name;
  freeifaddrs(list);
  return name;
}

// The local address the kernel would send to `to` from: a UDP socket "connected" there sends
// nothing, it only looks the route up.
bool source_for(const SockAddr& to, sockaddr_storage& local) {
  const int fd = socket(to.storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  socklen_t len = sizeof local;
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&to.storage), to.length) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  close(fd);
  return ok;
}

bool wildcard(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(&a)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (a.ss_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr, &in6addr_any, sizeof(in6_addr)) == 0;
  return true;
}

}  // namespace

std::string devices_routing_to(const std::vector<Address>& destinations) {
  std::vector<std::string> names;
  for (const auto& d : destinations) {
    sockaddr_storage local{};
    std::string name;
    try {
      if (source_for(resolve(d), local)) name = device_with(local);
    } catch (const std::exception&) {  // not resolvable now: the sink says so when it connects
    }
    if (name.empty()) return "";
    bool seen = false;
    for (const auto& n : names) seen = seen || n == name;
    if (!seen) names.push_back(name);
  }
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  return joined;
}

std::string device_of(const Address& listen) {
  try {
    const SockAddr a = resolve(listen);
    return wildcard(a.storage) ? "" : device_with(a.storage);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace netdaq::fleet::detail
