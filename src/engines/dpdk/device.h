// One DPDK ethdev port: found (or created, for virtual devices) from the interface's address,
// configured with the interface's queues, started, stopped and closed. Virtual devices the
// port created are removed again, so another Session in the process can create them anew.
#pragma once

#include <rte_ethdev.h>

#include <functional>
#include <string>

#include "netdaq/config.h"
#include "netdaq/engines/dpdk.h"
#include "util/unique_fd.h"

namespace netdaq::detail::dpdk {

// "0000:3b:00.0" for a PCI address (the short form gets domain 0), empty when it is not one.
std::string pci_device_name(const std::string& address);

class Device {
 public:
  Device(const InterfaceConfig& iface, const std::string& context);  // throws Error
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  uint16_t port() const noexcept { return port_; }
  const std::string& driver() const noexcept { return driver_; }
  const std::string& name() const noexcept { return name_; }
  const rte_eth_dev_info& info() const noexcept { return info_; }
  int socket() const noexcept;
  bool tx_checksum() const noexcept { return tx_checksum_; }
  bool split() const noexcept { return split_; }
  // Drivers that need mbufs with header and data in one mempool element (af_xdp builds its
  // UMEM over the mempool): rx gets a DPDK-memory pool instead of mbufs over the region.
  bool needs_own_mbufs() const noexcept { return driver_ == "net_af_xdp"; }

  // Configures every rx/tx queue of the interface (rte_flow isolation first, when asked and
  // the driver takes it then; see isolates_late()).
  void configure(bool header_split);
  // split_mp: the payload pool when the queue splits headers (mp) from payload (split_mp).
  void setup_rx_queue(uint16_t id, rte_mempool* mp, rte_mempool* split_mp);
  void setup_tx_queue(uint16_t id);
  void start();
  void stop() noexcept;

 private:
  [[noreturn]] void fail(const std::string& what, int rc) const;
  void isolate();                         // rte_flow isolated mode (dpdk.isolate)
  bool isolates_late() const noexcept;    // isolate after queue setup, not before configure
  void stop_here() noexcept;
  void in_own_netns(const std::function<void()>& fn) noexcept;

  const InterfaceConfig& iface_;
  std::string context_;
  std::string name_;      // DPDK device name (vdev name or full PCI address)
  std::string driver_;    // e.g. net_ring, mlx5_pci
  uint16_t port_ = 0;
  bool created_vdev_ = false;
  bool configured_ = false;
  bool started_ = false;
  bool tx_checksum_ = false;
  bool split_ = false;
  UniqueFd netns_;          // the network namespace the device was opened in
  uint16_t unused_tx_ = 0;  // tx queues added for drivers that pair them with rx queues
  rte_eth_dev_info info_{};
  
};

}  // namespace netdaq::detail::dpdk
