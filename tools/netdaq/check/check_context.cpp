#include "check/check_context.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "netdaq/engines/rdma.h"
#include "netdaq/engines/socket.h"
#include "netdaq/gpu.h"
#include "netdaq/netdaq.h"
#include "run_block.h"

namespace netdaq::cli::check {

namespace {

constexpr uint32_t kUdp4Headers = 20 + 8;
constexpr uint32_t kUdp6Headers = 40 + 8;

// "udp://10.0.0.1:5000" -> "10.0.0.1"; "udp://[::1]:46400" -> "::1"; "rdma://10.77.0.2" -> "10.77.0.2".
std::string host_of(std::string a) {
  if (const auto p = a.find("://"); p != std::string::npos) a = a.substr(p + 3);
  if (!a.empty() && a[0] == '[') return a.substr(1, a.find(']') - 1);
  if (std::count(a.begin(), a.end(), ':') == 1) a = a.substr(0, a.find(':'));
  return a;
}

bool is_ipv6(const std::string& host) { return host.find(':') != std::string::npos; }

// The netdev holding (local) or routing to (!local) an address, from /proc/net/route.
std::optional<std::string> netdev_of_ip(const SysReader& sys, const std::string& host, bool local, std::string* why) {
  if (host == "::1" || host.rfind("127.", 0) == 0) return "lo";
  if (host == "0.0.0.0" || host == "::") return *why = "bound to every address (no single NIC)", std::nullopt;
  const auto ip = parse_ipv4(host);
  if (!ip)
    return *why = is_ipv6(host) ? "IPv6 address " + host + " (only IPv4 routes are resolved)"
                                : "'" + host + "' is not an IP address",
           std::nullopt;
  const std::vector<Route> routes = parse_routes(sys.lines("/proc/net/route"));
  const Route* best = nullptr;
  for (const Route& r : routes) {
    if ((*ip & r.mask) != r.dest) continue;
    if (local && (r.gateway != 0 || r.mask == 0)) continue;  // a local address sits in a connected subnet
    if (!best || r.mask > best->mask) best = &r;
  }
  if (!best)
    return *why = "no route in /proc/net/route " + std::string(local ? "has " : "reaches ") + host, std::nullopt;
  return best->iface;
}

std::string pci_of_netdev(const SysReader& sys, const std::string& netdev) {
  const auto dev = sys.realpath("/sys/class/net/" + netdev + "/device");
  if (!dev) return {};
  const auto chain = pci_chain(*dev);
  return chain.empty() ? std::string() : chain.back();
}

struct Resolved {
  std::string netdev, pci, ip;
};

std::optional<Resolved> resolve(const SysReader& sys, const InterfaceConfig& i, const EngineNeeds& needs,
                                std::string* why) {
  Resolved r;
  if (needs.addressing == Addressing::none) return *why = "engine " + i.engine + ": no NIC", std::nullopt;
  if (needs.addressing == Addressing::netdev) {
    r.netdev = i.address;
  } else if (needs.addressing == Addressing::pci) {
    if (auto bdf = normalize_bdf(i.address)) {
      r.pci = *bdf;
      if (!sys.exists("/sys/bus/pci/devices/" + *bdf))
        return *why = "no PCI device " + *bdf + " (/sys/bus/pci/devices/" + *bdf + ")", std::nullopt;
      const auto nets = sys.list("/sys/bus/pci/devices/" + *bdf + "/net");
      if (!nets.empty()) r.netdev = nets.front();  // else bound to vfio-pci: DPDK owns the port
      return r;
    }
    const auto p = i.address.find("iface=");
    if (p == std::string::npos) return *why = "virtual DPDK device " + i.address + " (no NIC)", std::nullopt;
    r.netdev = i.address.substr(p + 6, i.address.find(',', p) - (p + 6));
  } else {
    // socket, rdma: the local address picks the NIC; a sender without one goes where its route goes.
    const bool local = !i.address.empty();
    const std::string host = host_of(local ? i.address : i.tx.destination);
    if (host.empty()) return *why = "no address", std::nullopt;
    // A multicast group joined on a named netdev (socket.multicast_interface; defaults: none).
    if (const auto& mc = i.options.get<SocketOptions>().multicast_interface; !mc.empty()) r.netdev = mc;
    if (r.netdev.empty()) {
      auto dev = netdev_of_ip(sys, host, local, why);
      if (!dev) return std::nullopt;
      r.netdev = *dev;
    }
    if (!is_ipv6(host) && local) r.ip = host;
  }
  if (!r.netdev.empty() && !sys.exists("/sys/class/net/" + r.netdev))
    return *why = "no network device " + r.netdev + " (/sys/class/net/" + r.netdev + ")", std::nullopt;
  if (r.pci.empty() && !r.netdev.empty()) r.pci = pci_of_netdev(sys, r.netdev);
  return r;
}

void add_queues(const Config& cfg, const InterfaceConfig& i, NicTarget& nic) {
  auto add = [&](const QueueConfig& q, const char* dir) {
    QueueRef ref;
    ref.name = q.name.empty() ? i.name + "/" + dir + std::to_string(q.id) : q.name;
    ref.rx = dir[0] == 'r';
    ref.cpu_core = q.cpu_core;
    for (const auto& rn : q.memory_regions)
      if (const auto* reg = cfg.find_region(rn)) ref.regions.push_back(reg);
    nic.queues.push_back(std::move(ref));
  };
  for (const auto& q : i.rx.queues) {
    nic.rx_ids.insert(q.id);
    add(q, "rx");
  }
  for (const auto& q : i.tx.queues) {
    nic.tx_ids.insert(q.id);
    add(q, "tx");
  }
  const bool v6 = is_ipv6(host_of(i.address.empty() ? i.tx.destination : i.address));
  const uint32_t headers = v6 ? kUdp6Headers : kUdp4Headers;
  const EngineNeeds needs = needs_of(i.engine);
  if (needs.roce) {
    nic.rdma_mtu = std::max(nic.rdma_mtu, i.options.get<RdmaOptions>().mtu);
    return;
  }
  if (!i.tx.queues.empty()) nic.largest_packet = std::max(nic.largest_packet, run_block(cfg).tx_payload_size + headers);
  for (const auto& g : i.rx.reorder)
    nic.largest_packet = std::max(nic.largest_packet, g.payload_offset + g.payload_size + headers);
}

void find_gpus(CheckContext& c) {
  const SysReader& sys = *c.sys;
  std::map<std::string, GpuTarget> on_bus;  // by PCI address: sorted like CUDA_DEVICE_ORDER=PCI_BUS_ID
  for (const auto& bdf : sys.list("/sys/bus/pci/devices")) {
    const std::string dir = "/sys/bus/pci/devices/" + bdf;
    if (sys.read(dir + "/vendor").value_or("") != "0x10de") continue;
    const std::string cls = sys.read(dir + "/class").value_or("");
    if (cls.rfind("0x0300", 0) != 0 && cls.rfind("0x0302", 0) != 0) continue;  // VGA / 3D controller
    GpuTarget g;
    g.bdf = bdf;
    g.name = "NVIDIA GPU " + sys.read(dir + "/device").value_or("");
    g.numa = static_cast<int>(sys.read_int(dir + "/numa_node").value_or(-1));
    g.bar1 = bar_size(sys.lines(dir + "/resource"), 1);  // BAR1: the window peers DMA through
    on_bus.emplace(bdf, std::move(g));
  }
  if (sys.live()) c.driver = query_cuda_driver();
  if (c.driver.usable && !c.driver.gpus.empty()) {
    for (const CudaGpu& d : c.driver.gpus) {
      GpuTarget g;
      if (auto it = on_bus.find(d.bdf); it != on_bus.end()) g = it->second;
      g.index = d.index;
      g.name = d.name;
      g.bdf = d.bdf;
      g.memory = d.memory_bytes;
      g.dmabuf = d.dmabuf;
      g.gdr = d.gdr;
      c.gpus.push_back(std::move(g));
    }
  } else {
    int index = 0;
    for (auto& [bdf, g] : on_bus) {
      g.index = index++;
      c.gpus.push_back(g);
    }
  }
  if (!c.cfg) return;
  for (const auto& r : c.cfg->memory_regions)
    if (r.kind == MemoryKind::device)
      for (auto& g : c.gpus)
        if (g.index == std::max(r.gpu, 0)) g.device_region_bytes += c.region_bytes(r);
}

}  // namespace

int CheckContext::numa_of_cpu(int cpu) const {
  for (const auto& n : sys->list("/sys/devices/system/node")) {
    if (n.rfind("node", 0) != 0 || n.size() < 5 || !std::isdigit(static_cast<unsigned char>(n[4]))) continue;
    if (parse_cpu_list(sys->read("/sys/devices/system/node/" + n + "/cpulist").value_or("")).count(cpu))
      return std::stoi(n.substr(4));
  }
  return -1;
}

uint64_t CheckContext::region_bytes(const MemoryRegionConfig& r) const {
  const uint64_t stride = (uint64_t{r.buf_size} + 63) / 64 * 64;  // buffers are cache-line aligned
  uint64_t bytes = stride * r.num_bufs;
  if (r.kind == MemoryKind::huge || r.kind == MemoryKind::device)
    bytes = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  return bytes;
}

CheckContext make_context(const SysReader& sys, const Config* cfg, std::string config_name) {
  CheckContext c;
  c.sys = &sys;
  c.cfg = cfg;
  c.config_name = std::move(config_name);
  c.gpu_built_in = gpu::built_in();
  const auto engines = netdaq::engines();
  c.rdma_built_in = std::find(engines.begin(), engines.end(), std::string(kRdmaEngine)) != engines.end();
  if (cfg) {
    for (const auto& i : cfg->interfaces) {
      EngineNeeds needs = needs_of(i.engine);
      // UDP GRO only matters to a receiving interface that asked for it.
      needs.gro = needs.gro && !i.rx.queues.empty() && i.options.get<SocketOptions>().gro;
      c.needs |= needs;
      for (const auto* qs : {&i.rx.queues, &i.tx.queues})  // polling cores, whether or not its NIC is found
        for (const auto& q : *qs)
          if (q.cpu_core >= 0) c.cores.insert(q.cpu_core);
      std::string why;
      const auto r = resolve(sys, i, needs, &why);
      if (!r) {
        c.unresolved.push_back({i.name, why});
        continue;
      }
      const std::string key = r->netdev.empty() ? r->pci : r->netdev;
      auto it = std::find_if(c.nics.begin(), c.nics.end(),
                             [&](const NicTarget& n) { return (n.netdev.empty() ? n.pci : n.netdev) == key; });
      if (it == c.nics.end()) {
        c.nics.push_back({});
        it = c.nics.end() - 1;
        it->netdev = r->netdev;
        it->pci = r->pci;
      }
      it->engines.insert(i.engine);
      it->needs |= needs;
      it->interfaces.push_back(i.name);
      if (it->ip.empty()) it->ip = r->ip;
      add_queues(*cfg, i, *it);
    }
  } else {
    for (const auto& n : sys.list("/sys/class/net")) {
      if (n == "lo" || sys.read("/sys/class/net/" + n + "/operstate").value_or("") != "up") continue;
      NicTarget t;
      t.netdev = n;
      t.pci = pci_of_netdev(sys, n);
      c.nics.push_back(std::move(t));
    }
  }
  find_gpus(c);
  return c;
}

}  // namespace netdaq::cli::check
