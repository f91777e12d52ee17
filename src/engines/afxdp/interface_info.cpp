#include "engines/afxdp/interface_info.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "netdaq/status.h"
#include "util/unique_fd.h"

namespace netdaq::detail::afxdp {

namespace {

// A datagram socket for SIOC* ioctls, closed on scope exit.
struct IoctlSocket {
  UniqueFd fd{socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  bool ethtool(const std::string& ifname, void* cmd) const {
    ifreq ifr{};
    std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname.c_str());
    ifr.ifr_data = static_cast<char*>(cmd);
    return fd && ioctl(fd.get(), SIOCETHTOOL, &ifr) == 0;
  }
};

}  // namespace

NetdevInfo netdev_info(const std::string& name, const std::string& context) {
  NetdevInfo info;
  info.name = name;
  info.ifindex = static_cast<int>(if_nametoindex(name.c_str()));
  if (info.ifindex == 0)
    throw Error(Errc::not_found, context + ": network interface '" + name +
                                     "' does not exist in this network namespace (see `ip link`)");
  IoctlSocket s;
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name.c_str());
  if (s.fd && ioctl(s.fd.get(), SIOCGIFHWADDR, &ifr) == 0) std::memcpy(info.mac.data(), ifr.ifr_hwaddr.sa_data, 6);

  ethtool_drvinfo drv{};
  drv.cmd = ETHTOOL_GDRVINFO;
  if (s.ethtool(name, &drv)) info.driver = drv.driver;
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  if (s.ethtool(name, &ch)) {
    info.rx_queues = static_cast<int>(ch.rx_count + ch.combined_count);
    info.tx_queues = static_cast<int>(ch.tx_count + ch.combined_count);
  }
  return info;
}

std::optional<uint32_t> interface_ipv4(const std::string& name) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<uint32_t> found;
  for (ifaddrs* a = list; a && !found; a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && name == a->ifa_name)
      found = reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr;
  freeifaddrs(list);
  return found;
}

std::optional<Mac> neighbour_mac(const std::string& ifname, uint32_t ipv4) {
  // thread-self: /proc/net shows the namespace of the thread group leader, not of this thread.
  std::ifstream arp("/proc/thread-self/net/arp");
  std::string line;
  std::getline(arp, line);  // header
  char want[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &ipv4, want, sizeof want);
  while (std::getline(arp, line)) {
    std::istringstream in(line);
    std::string ip, hwtype, flags, mac, mask, dev;
    if (!(in >> ip >> hwtype >> flags >> mac >> mask >> dev)) continue;
    const bool complete = std::strtoul(flags.c_str(), nullptr, 16) & 0x2;  // ATF_COM
    if (ip == want && dev == ifname && complete) return parse_mac(mac);
  }
  return std::nullopt;
}

}  // namespace netdaq::detail::afxdp
