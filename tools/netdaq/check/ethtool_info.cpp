#include "check/ethtool_info.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>

namespace netdaq::cli::check {

namespace {

class EthtoolSocket {
 public:
  explicit EthtoolSocket(const std::string& netdev) : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    std::strncpy(ifr_.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  }
  ~EthtoolSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  EthtoolSocket(const EthtoolSocket&) = delete;
  EthtoolSocket& operator=(const EthtoolSocket&) = delete;
  // True when the driver answered cmd (EOPNOTSUPP: the driver has no such operation).
  template <class T>
  bool get(T& data) {
    ifr_.ifr_data = reinterpret_cast<char*>(&data);
    return fd_ >= 0 && ioctl(fd_, SIOCETHTOOL, &ifr_) == 0;
  }

 private:
  int fd_;
  ifreq ifr_{};
};

EthtoolInfo live(const std::string& netdev) {
  EthtoolInfo e;
  EthtoolSocket s(netdev);
  ethtool_drvinfo drv{};
  drv.cmd = ETHTOOL_GDRVINFO;
  if (s.get(drv)) e.driver = drv.driver;
  ethtool_ringparam ring{};
  ring.cmd = ETHTOOL_GRINGPARAM;
  if (s.get(ring)) {
    e.rx_ring = ring.rx_pending;
    e.rx_ring_max = ring.rx_max_pending;
    e.tx_ring = ring.tx_pending;
    e.tx_ring_max = ring.tx_max_pending;
  }
  ethtool_pauseparam pause{};
  pause.cmd = ETHTOOL_GPAUSEPARAM;
  if (s.get(pause)) {
    e.pause_autoneg = pause.autoneg != 0;
    e.pause_rx = pause.rx_pause != 0;
    e.pause_tx = pause.tx_pause != 0;
  }
  ethtool_value v{};
  v.cmd = ETHTOOL_GGRO;
  if (s.get(v)) e.gro = v.data != 0;
  v = {};
  v.cmd = ETHTOOL_GFLAGS;
  if (s.get(v)) e.lro = (v.data & ETH_FLAG_LRO) != 0;
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  if (s.get(ch)) {
    e.channels_rx = ch.rx_count;
    e.channels_tx = ch.tx_count;
    e.channels_combined = ch.combined_count;
    e.channels_combined_max = ch.max_combined;
  }
  return e;
}

EthtoolInfo snapshot(const SysReader& sys, const std::string& netdev) {
  std::map<std::string, std::string> kv;
  for (const auto& l : sys.lines("/ethtool/" + netdev)) {
    const auto colon = l.find(':');
    if (l.empty() || l[0] == '#' || colon == std::string::npos) continue;
    std::string v = l.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    kv[l.substr(0, colon)] = v;
  }
  auto num = [&](const char* k) -> std::optional<uint32_t> {
    auto it = kv.find(k);
    if (it == kv.end()) return std::nullopt;
    try {
      return static_cast<uint32_t>(std::stoul(it->second));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  auto flag = [&](const char* k) -> std::optional<bool> {
    auto it = kv.find(k);
    if (it == kv.end()) return std::nullopt;
    return it->second == "on";
  };
  EthtoolInfo e;
  if (auto it = kv.find("driver"); it != kv.end()) e.driver = it->second;
  e.rx_ring = num("rx-ring");
  e.rx_ring_max = num("rx-ring-max");
  e.tx_ring = num("tx-ring");
  e.tx_ring_max = num("tx-ring-max");
  e.pause_autoneg = flag("pause-autoneg");
  e.pause_rx = flag("pause-rx");
  e.pause_tx = flag("pause-tx");
  e.gro = flag("gro");
  e.lro = flag("lro");
  e.channels_rx = num("channels-rx");
  e.channels_tx = num("channels-tx");
  e.channels_combined = num("channels-combined");
  e.channels_combined_max = num("channels-combined-max");
  return e;
}

}  // namespace

EthtoolInfo read_ethtool(const SysReader& sys, const std::string& netdev) {
  return sys.live() ? live(netdev) : snapshot(sys, netdev);
}

}  // namespace netdaq::cli::check
