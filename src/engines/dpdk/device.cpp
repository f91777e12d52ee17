#include "engines/dpdk/device.h"

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_flow.h>

#include <cerrno>

#include "core/log.h"
#include "engines/dpdk/eal.h"
#include "net/pci_address.h"
#include "netdaq/status.h"
#include "util/errno_text.h"
#include "util/netns_scope.h"

namespace netdaq::detail::dpdk {

std::string pci_device_name(const std::string& a) {
  const auto pci = parse_pci(a);  // as the validator reads it: a vdev spec is not a PCI address
  return pci ? pci->to_string() : std::string();
}

Device::Device(const InterfaceConfig& iface, const std::string& context)
    : iface_(iface), context_(context), netns_(open_current_netns()) {
  const std::string& a = iface.address;
  if (a.empty())
    throw Error(Errc::invalid_config, context + ": address is empty; the dpdk engine needs a PCI address "
                                                "(0000:3b:00.0) or a virtual device (net_null0)");
  const std::string pci = pci_device_name(a);
  const size_t comma = a.find(',');
  name_ = !pci.empty() ? pci : a.substr(0, comma);
  if (rte_eth_dev_get_port_by_name(name_.c_str(), &port_) != 0) {
    int rc;
    if (!pci.empty()) {
      rc = rte_dev_probe(pci.c_str());
    } else {
      rc = rte_vdev_init(name_.c_str(), comma == std::string::npos ? "" : a.c_str() + comma + 1);
      created_vdev_ = rc == 0;
    }
    if (rc != 0 || rte_eth_dev_get_port_by_name(name_.c_str(), &port_) != 0) {
      std::string why = rc ? rte_strerror(-rc < 0 ? rc : -rc) : "no ethdev port appeared";
      const std::string dpdk_says = last_dpdk_errors();
      throw Error(Errc::not_found,
                  context + ": DPDK cannot open device '" + a + "': " + why +
                      (dpdk_says.empty() ? "" : " (DPDK says: " + dpdk_says + ")") +
                      (pci.empty() ? "; virtual devices are net_<driver><n>[,key=value...], e.g. net_null0 or "
                                     "net_af_xdp0,iface=eth1"
                                   : "; is the NIC bound to vfio-pci (dpdk-devbind.py) or a bifurcated driver "
                                     "(mlx5)?"));
    }
  }
  const int rc = rte_eth_dev_info_get(port_, &info_);
  if (rc != 0) fail("rte_eth_dev_info_get", rc);
  driver_ = info_.driver_name ? info_.driver_name : "?";
}

Device::~Device() {
  in_own_netns([this] {
    stop_here();
    if (configured_ || created_vdev_) rte_eth_dev_close(port_);
    if (created_vdev_) rte_vdev_uninit(name_.c_str());
  });
}

// Drivers with a kernel side (af_xdp, af_packet, tap) find their netdev by name or index in the
// calling thread's network namespace: stop and close from inside the namespace the device
// was opened in, whichever thread destroys the Session.
void Device::in_own_netns(const std::function<void()>& fn) noexcept {
  run_in_netns(netns_, [&](int err) {
    if (err) log()->warn("{}: cannot enter the device's network namespace to close it: {}", context_, errno_text(err));
    fn();
  });
}

int Device::socket() const noexcept {
  const int s = rte_eth_dev_socket_id(port_);
  return s < 0 ? 0 : s;
}

void Device::fail(const std::string& what, int rc) const {
  const int err = rc < 0 ? -rc : rc;
  const std::string dpdk_says = last_dpdk_errors();
  throw Error(Errc::system, context_ + ": " + what + " on port " + std::to_string(port_) + " (" + name_ + ", driver " +
                                driver_ + ") failed: " + rte_strerror(err) +
                                (dpdk_says.empty() ? "" : " (DPDK says: " + dpdk_says + ")"));
}

void Device::configure(bool header_split) {
  const DpdkOptions& o = iface_.options.get<DpdkOptions>();
  const auto nb_rx = static_cast<uint16_t>(iface_.rx.queues.size());
  const auto nb_tx = static_cast<uint16_t>(iface_.tx.queues.size());
  if (nb_rx > info_.max_rx_queues || nb_tx > info_.max_tx_queues)
    throw Error(Errc::unsupported, context_ + ": driver " + driver_ + " of '" + name_ + "' has at most " +
                                       std::to_string(info_.max_rx_queues) + " rx and " +
                                       std::to_string(info_.max_tx_queues) + " tx queues; the config asks for " +
                                       std::to_string(nb_rx) + " and " + std::to_string(nb_tx));
  if (o.isolate && !isolates_late()) isolate();
  rte_eth_conf conf{};
  if (nb_rx > 1 && info_.flow_type_rss_offloads) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info_.flow_type_rss_offloads;
  }
  if (header_split) {
    if (!(info_.rx_offload_capa & RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT))
      throw Error(Errc::unsupported, context_ + ": header-data split (a queue with two memory_regions) needs "
                                                "RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT, which driver " + driver_ + " of '" +
                                                name_ + "' does not have; give each rx queue one memory region");
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT | RTE_ETH_RX_OFFLOAD_SCATTER;
    split_ = true;
  }
  const uint64_t cksum = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
  if (o.tx_checksum_offload && nb_tx && (info_.tx_offload_capa & cksum) == cksum) {
    conf.txmode.offloads |= cksum;
    tx_checksum_ = true;
  }
  if (o.loopback == DpdkLoopback::hardware) conf.lpbk_mode = 1;
  int rc = rte_eth_dev_configure(port_, nb_rx, nb_tx, &conf);
  if (rc != 0 && nb_tx < nb_rx && rte_eth_dev_configure(port_, nb_rx, nb_rx, &conf) == 0) {
    // Some drivers (af_xdp, tap) pair each rx queue with a tx queue: add unused tx queues.
    unused_tx_ = static_cast<uint16_t>(nb_rx - nb_tx);
    log()->info("{}: driver {} needs as many tx as rx queues: {} unused tx queue(s) added", context_, driver_,
                unused_tx_);
    rc = 0;
  }
  if (rc != 0) {
    if (o.loopback == DpdkLoopback::hardware)
      throw Error(Errc::unsupported, context_ + ": dpdk.loopback hardware: driver " + driver_ + " of '" + name_ +
                                         "' refused the port configuration (" + rte_strerror(-rc) +
                                         "); use loopback: software");
    fail("rte_eth_dev_configure with " + std::to_string(nb_rx) + " rx and " + std::to_string(nb_tx) + " tx queues" +
             (nb_rx < nb_tx ? std::string(" (some drivers need as many rx as tx queues)") : std::string()),
         rc);
  }
  configured_ = true;
  if (o.mtu && (rc = rte_eth_dev_set_mtu(port_, static_cast<uint16_t>(o.mtu))) != 0)
    fail("setting dpdk.mtu " + std::to_string(o.mtu), rc);
}

void Device::setup_rx_queue(uint16_t id, rte_mempool* mp, rte_mempool* split_mp) {
  uint16_t nb_rx = iface_.options.get<DpdkOptions>().rx_desc, nb_tx = iface_.options.get<DpdkOptions>().tx_desc;
  rte_eth_dev_adjust_nb_rx_tx_desc(port_, &nb_rx, &nb_tx);
  rte_eth_rxconf rxconf = info_.default_rxconf;
  rxconf.offloads = 0;
  int rc;
  if (split_mp) {
    // Headers (Ethernet, IPv4/IPv6, UDP) into mp, the payload into split_mp.
    rte_eth_rxseg_split segs[2]{};
    segs[0].mp = mp;
    segs[1].mp = split_mp;
    uint32_t ptypes[16];
    const int n = rte_eth_buffer_split_get_supported_hdr_ptypes(port_, ptypes, 16);
    bool by_protocol = false;
    for (int i = 0; i < n; ++i)
      if ((ptypes[i] & RTE_PTYPE_L4_MASK) == RTE_PTYPE_L4_UDP) by_protocol = true;
    if (by_protocol) {
      segs[0].proto_hdr = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | RTE_PTYPE_L4_UDP;
    } else {
      segs[0].length = 42;  // Ethernet + IPv4 + UDP without options or VLAN tags
    }
    rte_eth_rxseg seg_union[2]{};
    seg_union[0].split = segs[0];
    seg_union[1].split = segs[1];
    rxconf.rx_seg = seg_union;
    rxconf.rx_nseg = 2;
    rxconf.offloads = RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT | RTE_ETH_RX_OFFLOAD_SCATTER;
    rc = rte_eth_rx_queue_setup(port_, id, nb_rx, static_cast<unsigned>(socket()), &rxconf, nullptr);
  } else {
    rc = rte_eth_rx_queue_setup(port_, id, nb_rx, static_cast<unsigned>(socket()), &rxconf, mp);
  }
  if (rc != 0) fail("rte_eth_rx_queue_setup of rx queue " + std::to_string(id), rc);
}

void Device::setup_tx_queue(uint16_t id) {
  uint16_t nb_rx = iface_.options.get<DpdkOptions>().rx_desc, nb_tx = iface_.options.get<DpdkOptions>().tx_desc;
  rte_eth_dev_adjust_nb_rx_tx_desc(port_, &nb_rx, &nb_tx);
  rte_eth_txconf txconf = info_.default_txconf;
  txconf.offloads = tx_checksum_ ? (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM) : 0;
  const int rc = rte_eth_tx_queue_setup(port_, id, nb_tx, static_cast<unsigned>(socket()), &txconf);
  if (rc != 0) fail("rte_eth_tx_queue_setup of tx queue " + std::to_string(id), rc);
}

// rte_flow.h recommends isolated mode before rte_eth_dev_configure, and some drivers refuse it
// later. DPDK 22.11's tap driver accepts it then but changes no TC rule until the tap has
// queues (seen under a kernel with the TC modules: the remote netdev's implicit rules kept
// redirecting all its traffic into the tap, and the tap got no catch-all drop rule), and a
// second call with the same value does nothing. So the tap is isolated once its queues are
// set up, before it starts.
bool Device::isolates_late() const noexcept { return driver_ == "net_tap"; }

void Device::isolate() {
  rte_flow_error err{};
  if (rte_flow_isolate(port_, 1, &err) != 0)
    throw Error(Errc::unsupported, context_ + ": dpdk.isolate: driver " + driver_ + " cannot isolate '" + name_ +
                                       "' (" + (err.message ? err.message : rte_strerror(rte_errno)) +
                                       "); set isolate: false");
}

void Device::start() {
  const auto nb_tx = static_cast<uint16_t>(iface_.tx.queues.size());
  for (uint16_t id = nb_tx; id < nb_tx + unused_tx_; ++id) setup_tx_queue(id);
  if (iface_.options.get<DpdkOptions>().isolate && isolates_late()) isolate();
  int rc = rte_eth_dev_start(port_);
  if (rc != 0) fail("rte_eth_dev_start", rc);
  started_ = true;
  if (iface_.options.get<DpdkOptions>().promiscuous && (rc = rte_eth_promiscuous_enable(port_)) != 0 && rc != -ENOTSUP)
    log()->warn("{}: cannot enable promiscuous mode: {}", context_, rte_strerror(-rc));
  rte_eth_stats_reset(port_);
  rte_eth_xstats_reset(port_);
}

void Device::stop() noexcept {
  in_own_netns([this] { stop_here(); });
}

void Device::stop_here() noexcept {
  if (!started_) return;
  started_ = false;
  if (iface_.options.get<DpdkOptions>().promiscuous) rte_eth_promiscuous_disable(port_);
  rte_eth_dev_stop(port_);
}

}  // namespace netdaq::detail::dpdk
