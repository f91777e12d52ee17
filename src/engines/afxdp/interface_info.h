// What the afxdp engine needs to know about a netdev, read from the kernel of the calling
// thread's network namespace (ioctl, getifaddrs, /proc/thread-self/net/arp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "net/frame_headers.h"

namespace netdaq::detail::afxdp {

struct NetdevInfo {
  std::string name;
  int ifindex = 0;
  Mac mac{};
  std::string driver;   // ethtool driver name ("veth", "mlx5_core"), empty if unknown
  int rx_queues = -1;   // -1: the driver does not say (ETHTOOL_GCHANNELS unsupported)
  int tx_queues = -1;
};

// Throws Error(not_found) naming the interface and the namespace when it does not exist.
NetdevInfo netdev_info(const std::string& name, const std::string& context);

// The interface's first IPv4 address (network order), if it has one.
std::optional<uint32_t> interface_ipv4(const std::string& name);
// The kernel's ARP entry for an IPv4 address on the interface (complete entries only).
std::optional<Mac> neighbour_mac(const std::string& ifname, uint32_t ipv4);

}  // namespace netdaq::detail::afxdp
