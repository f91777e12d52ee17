// What ethtool would say about a netdev: rings, pause frames, GRO/LRO, channels, driver.
// Live: SIOCETHTOOL ioctls. Under --root: the snapshot file <root>/ethtool/<netdev>, lines
// "key: value" with the keys of EthtoolInfo (tests/check/fixtures/README.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "check/sysfs_reader.h"

namespace netdaq::cli::check {

struct EthtoolInfo {
  std::optional<std::string> driver;                                   // ETHTOOL_GDRVINFO (virtual devices too)
  std::optional<uint32_t> rx_ring, rx_ring_max, tx_ring, tx_ring_max;  // ETHTOOL_GRINGPARAM
  std::optional<bool> pause_autoneg, pause_rx, pause_tx;               // ETHTOOL_GPAUSEPARAM
  std::optional<bool> gro;                                             // ETHTOOL_GGRO
  std::optional<bool> lro;                                             // ETHTOOL_GFLAGS & ETH_FLAG_LRO
  std::optional<uint32_t> channels_rx, channels_tx, channels_combined, channels_combined_max;  // ETHTOOL_GCHANNELS
};

EthtoolInfo read_ethtool(const SysReader& sys, const std::string& netdev);

}  // namespace netdaq::cli::check
