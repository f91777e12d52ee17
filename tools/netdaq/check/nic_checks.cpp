// Each NIC of the config: driver, link, MTU against the largest packet, rings, pause frames,
// GRO/LRO, native XDP, queue count against the queue ids, RDMA device and RoCEv2 GID.
#include <algorithm>

#include "check/checks.h"
#include "check/ethtool_info.h"

namespace netdaq::cli::check {

namespace {

constexpr uint32_t kEthHeader = 14 + 4;                   // Ethernet + one VLAN tag
constexpr uint32_t kRoceOverhead = 20 + 8 + 12 + 16 + 4;  // IPv4, UDP, BTH, RETH, ICRC

// Drivers with native (driver-mode) XDP, and those of them with AF_XDP zero-copy.
const std::set<std::string> kNativeXdp{
    "mlx5_core", "mlx4_en",   "mlx4_core", "i40e",           "ice",   "ixgbe",      "ixgbevf",       "igb",
    "igc",       "bnxt_en",   "nfp",       "qede",           "ena",   "virtio_net", "veth",          "tun",
    "sfc",       "mvneta",    "mvpp2",     "stmmac",         "enetc", "hv_netvsc",  "gve",           "idpf",
    "fec",       "dpaa2-eth", "rvu_nicpf", "lan966x-switch", "tsnep", "cpsw",       "am65-cpsw-nuss"};
const std::set<std::string> kZeroCopyXdp{"mlx5_core", "i40e", "ice",        "ixgbe", "igc",   "igb",      "stmmac",
                                         "gve",       "idpf", "virtio_net", "enetc", "tsnep", "rvu_nicpf"};

struct Nic {
  const NicTarget& t;
  std::string name;    // netdev, or the PCI address when DPDK owns the port
  std::string driver;  // "" unknown
  EthtoolInfo eth;
  bool kernel() const { return !t.netdev.empty(); }
  bool loopback() const { return t.netdev == "lo"; }
  const EngineNeeds& needs() const { return t.needs; }
  bool bypasses_stack() const { return t.needs.xdp || t.needs.owns_port; }  // packets never meet the kernel's stack
  std::string engines() const {
    std::string s;
    for (const auto& e : t.engines) s += (s.empty() ? "" : "/") + e;
    return s;
  }
};

std::string net_attr(const Nic& n, const std::string& attr) { return "/sys/class/net/" + n.t.netdev + "/" + attr; }

void driver_check(const Nic& n, Checks& out) {
  const char* why = "the driver decides native XDP, zero-copy, dma-buf and DPDK support";
  std::string what = n.driver.empty() ? "unknown driver" : n.driver;
  if (!n.t.pci.empty())
    what += " (" + n.t.pci + ")";
  else if (n.kernel())
    what += " (virtual device)";
  const bool dpdk_bound = n.driver == "vfio-pci" || n.driver == "uio_pci_generic" || n.driver == "igb_uio";
  const bool bifurcated = n.driver == "mlx5_core" || n.driver == "mlx4_core";  // DPDK shares the port with the kernel
  if (n.needs().owns_port && !n.t.pci.empty() && !dpdk_bound && !bifurcated)
    out.add("nic.driver", n.name, Status::fail, what + ": the " + n.engines() + " engine needs the port on vfio-pci",
            why, "modprobe vfio-pci && dpdk-devbind.py -b vfio-pci " + n.t.pci);
  else
    out.add("nic.driver", n.name, Status::pass, what + (dpdk_bound ? ": DPDK owns the port" : ""), why);
}

void link_check(const CheckContext& c, const Nic& n, Checks& out) {
  const std::string state = c.sys->read(net_attr(n, "operstate")).value_or("?");
  const auto speed = c.sys->read_int(net_attr(n, "speed"));  // EINVAL (unreadable) while the link is down
  std::string rate = "unknown";
  if (speed && *speed > 0)
    rate = *speed % 1000 ? std::to_string(*speed) + " Mb/s" : std::to_string(*speed / 1000) + " Gb/s";
  const std::string what = "operstate " + state + ", speed " + rate;
  const char* why = "a link that is down receives nothing; its speed bounds the line rate";
  if (state == "up" || (n.loopback() && state == "unknown"))
    out.add("nic.link", n.name, Status::pass, what, why);
  else if (state == "unknown" || state == "dormant")
    out.add("nic.link", n.name, Status::warn, what, why, "ip link set dev " + n.t.netdev + " up; check the cable");
  else
    out.add("nic.link", n.name, Status::fail, what, why,
            "ip link set dev " + n.t.netdev + " up; check the cable and the switch port");
}

void mtu_check(const CheckContext& c, const Nic& n, Checks& out) {
  const auto mtu = c.sys->read_int(net_attr(n, "mtu"));
  const char* why =
      "a packet larger than the MTU is dropped by the NIC (or fragmented by the sender's kernel); RoCE "
      "needs the path MTU plus its headers";
  if (!mtu) {
    out.add("nic.mtu", n.name, Status::skip, "MTU unreadable", why);
    return;
  }
  uint32_t need = n.t.largest_packet;
  std::string from = need ? std::to_string(need) + "-byte packets the config sends or expects" : "";
  if (n.t.rdma_mtu && n.t.rdma_mtu + kRoceOverhead > need) {
    need = n.t.rdma_mtu + kRoceOverhead;
    from =
        "rdma mtu " + std::to_string(n.t.rdma_mtu) + " + " + std::to_string(kRoceOverhead) + " bytes of RoCEv2 headers";
  }
  const std::string what = "MTU " + std::to_string(*mtu);
  if (need > *mtu) {
    const uint32_t want = need <= 9000 ? 9000 : need;
    out.add("nic.mtu", n.name, Status::fail, what + " < " + std::to_string(need) + " (" + from + ")", why,
            "ip link set dev " + n.t.netdev + " mtu " + std::to_string(want) +
                " (persist it in the interface's network config; the switch and the sender need it too)");
    return;
  }
  std::string extra = need ? " >= " + std::to_string(need) + " (" + from + ")" : "";
  // afxdp/dpdk put whole frames in the rx buffers: a buffer shorter than MTU + headers truncates.
  if (n.bypasses_stack())
    for (const auto& q : n.t.queues)
      for (const auto* r : q.regions)
        if (q.rx && r->buf_size < *mtu + kEthHeader && q.regions.size() == 1) {
          out.add("nic.mtu", n.name, Status::warn,
                  what + extra + "; region '" + r->name + "' buffers hold " + std::to_string(r->buf_size) +
                      " bytes < MTU + " + std::to_string(kEthHeader) + " bytes of Ethernet header",
                  "a frame longer than its buffer is dropped",
                  "set buf_size of region '" + r->name + "' to at least " + std::to_string(*mtu + kEthHeader) +
                      ", or lower the MTU");
          return;
        }
  out.add("nic.mtu", n.name, Status::pass, what + extra, why);
}

void ring_check(const Nic& n, Checks& out) {
  const char* why = "the rx ring absorbs bursts while the poller is away; a short ring overflows (rx_missed) first";
  const auto& e = n.eth;
  if (!e.rx_ring || !e.rx_ring_max || *e.rx_ring_max == 0) {
    out.add("nic.rings", n.name, Status::skip, "the driver reports no ring sizes", why);
    return;
  }
  const std::string what =
      "rx ring " + std::to_string(*e.rx_ring) + " of max " + std::to_string(*e.rx_ring_max) +
      (e.tx_ring ? ", tx ring " + std::to_string(*e.tx_ring) + " of " + std::to_string(e.tx_ring_max.value_or(0)) : "");
  const uint32_t want = std::min<uint32_t>(*e.rx_ring_max, 8192);
  if (*e.rx_ring < want && !n.needs().owns_port)  // DPDK sets its own rings (dpdk.rx_desc)
    out.add("nic.rings", n.name, Status::warn, what, why, "ethtool -G " + n.t.netdev + " rx " + std::to_string(want));
  else
    out.add("nic.rings", n.name, Status::pass, what, why);
}

void pause_check(const Nic& n, Checks& out) {
  const char* why =
      "with tx pause on, a NIC whose buffer fills asks the switch (or a sender that honors pause "
      "frames) to hold back instead of dropping; with rx pause on it honors the peer's requests";
  const auto& e = n.eth;
  if (!e.pause_rx || !e.pause_tx) {
    out.add("nic.pause", n.name, Status::skip, "the driver reports no pause settings", why);
    return;
  }
  auto on = [](bool b) { return b ? "on" : "off"; };
  const std::string what = std::string("pause frames: rx ") + on(*e.pause_rx) + ", tx " + on(*e.pause_tx) +
                           ", autoneg " + on(e.pause_autoneg.value_or(false));
  if (!*e.pause_tx && !n.t.rx_ids.empty())
    out.add(
        "nic.pause", n.name, Status::warn, what + ": a full rx buffer drops packets", why,
        "ethtool -A " + n.t.netdev + " rx on tx on (where the switch honors pause frames; RoCE: enable PFC instead)");
  else
    out.add("nic.pause", n.name, Status::pass, what, why);
}

void offload_check(const Nic& n, Checks& out) {
  const auto& e = n.eth;
  const char* why =
      "LRO merges packets in the NIC (boundaries, headers and counts are lost; XDP refuses to attach); "
      "GRO merges them in the kernel: the socket engine's UDP GRO relies on it, while AF_XDP copy "
      "mode and native XDP on some drivers want it off";
  if (!e.gro && !e.lro) {
    out.add("nic.offloads", n.name, Status::skip, "the driver reports no GRO/LRO state", why);
    return;
  }
  auto on = [](const std::optional<bool>& b) { return b ? (*b ? "on" : "off") : "?"; };
  const std::string what = std::string("GRO ") + on(e.gro) + ", LRO " + on(e.lro);
  if (e.lro.value_or(false))
    out.add("nic.offloads", n.name, Status::fail, what, why, "ethtool -K " + n.t.netdev + " lro off");
  else if (e.gro.value_or(false) && n.bypasses_stack())
    out.add("nic.offloads", n.name, Status::warn, what + ": " + n.engines() + " wants packets as sent", why,
            "ethtool -K " + n.t.netdev + " gro off");
  else if (!e.gro.value_or(true) && n.needs().gro)
    out.add("nic.offloads", n.name, Status::warn, what + ": the socket engine's UDP GRO gets single datagrams", why,
            "ethtool -K " + n.t.netdev + " gro on");
  else
    out.add("nic.offloads", n.name, Status::pass, what, why);
}

void xdp_check(const Nic& n, Checks& out) {
  const char* why =
      "native XDP runs in the driver before any allocation; generic (skb) mode copies each packet "
      "after the stack allocated it (~1-3 Mpps per core); zero-copy AF_XDP skips the last copy";
  if (n.driver.empty()) {
    out.add("nic.xdp", n.name, Status::skip, "unknown driver", why);
    return;
  }
  const bool native = kNativeXdp.count(n.driver) > 0, zc = kZeroCopyXdp.count(n.driver) > 0;
  const std::string what =
      n.driver + ": native XDP " + (native ? "yes" : "no") + ", AF_XDP zero-copy " + (zc ? "yes" : "no");
  if (!n.needs().xdp || native)
    out.add("nic.xdp", n.name, Status::pass, what, why);
  else
    out.add("nic.xdp", n.name, Status::warn, what + ": the " + n.engines() + " engine falls back to generic XDP", why,
            "use a NIC whose driver has native XDP (mlx5_core, ice, i40e, ixgbe, igc, bnxt_en, ...)");
}

void queue_check(const CheckContext& c, const Nic& n, Checks& out) {
  const char* why =
      "afxdp and dpdk open NIC queues by id: an id at or above the NIC's queue count cannot be opened, "
      "and flows steered to it are lost";
  if (!n.bypasses_stack()) {
    out.add("nic.queues", n.name, Status::skip,
            n.t.engines.empty() ? "no queue ids to compare (no config)"
                                : "the " + n.engines() + " engine's queue ids are not NIC queues",
            why);
    return;
  }
  if (!n.kernel()) {
    out.add("nic.queues", n.name, Status::skip, "DPDK owns the port: its queue count is set by the engine", why);
    return;
  }
  uint32_t rx = 0, tx = 0;
  for (const auto& q : c.sys->list(net_attr(n, "queues"))) {
    rx += q.rfind("rx-", 0) == 0;
    tx += q.rfind("tx-", 0) == 0;
  }
  const auto& e = n.eth;
  if (e.channels_combined || e.channels_rx) {  // ethtool's view: channels, not sysfs' software queues
    rx = e.channels_combined.value_or(0) + e.channels_rx.value_or(0);
    tx = e.channels_combined.value_or(0) + e.channels_tx.value_or(0);
  }
  const int max_rx = n.t.rx_ids.empty() ? -1 : *n.t.rx_ids.rbegin();
  const int max_tx = n.t.tx_ids.empty() ? -1 : *n.t.tx_ids.rbegin();
  auto ids = [](int m) { return m < 0 ? std::string("none") : "0.." + std::to_string(m); };
  const std::string what = std::to_string(rx) + " rx / " + std::to_string(tx) + " tx queues; the config uses rx ids " +
                           ids(max_rx) + ", tx ids " + ids(max_tx);
  if (max_rx >= static_cast<int>(rx) || max_tx >= static_cast<int>(tx)) {
    const int want = std::max(max_rx, max_tx) + 1;
    std::string fix = "ethtool -L " + n.t.netdev + " combined " + std::to_string(want);
    if (e.channels_combined_max) fix += " (max " + std::to_string(*e.channels_combined_max) + ")";
    out.add("nic.queues", n.name, Status::fail, what, why, fix);
  } else {
    out.add("nic.queues", n.name, Status::pass, what, why);
  }
}

struct Gid {
  std::string device, port, index, gid, type;
};

// Every GID entry whose netdev is `netdev`.
std::vector<Gid> gids_of(const SysReader& sys, const std::string& netdev, std::set<std::string>* devices) {
  std::vector<Gid> out;
  for (const auto& dev : sys.list("/sys/class/infiniband")) {
    const std::string ports = "/sys/class/infiniband/" + dev + "/ports";
    for (const auto& port : sys.list(ports)) {
      const std::string p = ports + "/" + port;
      for (const auto& idx : sys.list(p + "/gid_attrs/ndevs")) {
        if (sys.read(p + "/gid_attrs/ndevs/" + idx).value_or("") != netdev) continue;
        devices->insert(dev);
        out.push_back({dev, port, idx, sys.read(p + "/gids/" + idx).value_or(""),
                       sys.read(p + "/gid_attrs/types/" + idx).value_or("")});
      }
    }
  }
  return out;
}

void rdma_check(const CheckContext& c, const Nic& n, Checks& out) {
  const char* why =
      "the rdma engine reaches its peer through the RDMA device on this netdev, by the RoCEv2 GID of "
      "its IP address";
  std::set<std::string> devices;
  const auto gids = gids_of(*c.sys, n.t.netdev, &devices);
  std::string devs;
  for (const auto& d : devices) devs += (devs.empty() ? "" : ", ") + d;
  if (!n.needs().roce) {
    if (devices.empty())
      out.add("nic.rdma", n.name, Status::skip, "no RDMA device on " + n.t.netdev, why);
    else
      out.add("nic.rdma", n.name, Status::pass, "RDMA devices: " + devs, why);
    return;
  }
  if (devices.empty()) {
    out.add("nic.rdma", n.name, Status::fail, "no RDMA device on " + n.t.netdev + " (/sys/class/infiniband)", why,
            "load the NIC's RDMA driver (modprobe mlx5_ib), or Soft-RoCE: rdma link add rxe_" + n.t.netdev +
                " type rxe netdev " + n.t.netdev);
    return;
  }
  const auto ip = parse_ipv4(n.t.ip);
  if (!ip) {
    out.add("nic.rdma", n.name, Status::pass,
            "RDMA devices " + devs + " (no IPv4 address in the config to match a GID)", why);
    return;
  }
  const std::string want = ipv4_gid(*ip);
  for (const auto& g : gids)
    if (g.gid == want && g.type == "RoCE v2") {
      out.add("nic.rdma", n.name, Status::pass,
              g.device + " port " + g.port + " GID index " + g.index + " (RoCE v2) = " + n.t.ip, why);
      return;
    }
  out.add("nic.rdma", n.name, Status::fail, "RDMA devices " + devs + " have no RoCE v2 GID for " + n.t.ip, why,
          "put the address on the netdev: ip addr add " + n.t.ip + "/24 dev " + n.t.netdev +
              " (the GID table follows the netdev's addresses)");
}

}  // namespace

std::vector<CheckResult> nic_checks(const CheckContext& c) {
  Checks out("nic");
  for (const auto& u : c.unresolved) {
    const bool benign =
        u.why.find("every address") != std::string::npos || u.why.find("no NIC") != std::string::npos;
    out.add("nic.resolve", "interface " + u.interface, benign ? Status::skip : Status::warn, u.why,
            "the NIC checks need the netdev an interface uses",
            benign ? "" : "set the interface's address to an address or netdev of this machine (ip -br addr)");
  }
  if (c.nics.empty() && c.unresolved.empty())
    out.add("nic.link", "", Status::skip, c.cfg ? "the config names no NIC" : "no NIC is up (besides lo)",
            "the NIC checks need a netdev");
  for (const auto& t : c.nics) {
    Nic n{t, t.netdev.empty() ? t.pci : t.netdev, {}, {}};
    if (n.kernel()) {
      n.eth = read_ethtool(*c.sys, t.netdev);
      n.driver = c.sys->link_name(net_attr(n, "device/driver"))
                     .value_or(n.eth.driver.value_or(n.loopback() ? "loopback" : ""));
    } else {
      n.driver = c.sys->link_name("/sys/bus/pci/devices/" + t.pci + "/driver").value_or("");
    }
    driver_check(n, out);
    if (!n.kernel()) continue;  // DPDK owns the port: nothing the kernel can tell
    link_check(c, n, out);
    mtu_check(c, n, out);
    if (n.loopback()) continue;  // lo has no ring, pause, offload, XDP or RDMA settings worth checking
    ring_check(n, out);
    pause_check(n, out);
    offload_check(n, out);
    xdp_check(n, out);
    queue_check(c, n, out);
    rdma_check(c, n, out);
  }
  return out.results();
}

}  // namespace netdaq::cli::check
