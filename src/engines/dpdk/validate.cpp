// dpdk engine: the port's device (a PCI address or a virtual device), its queues (numbered
// 0..n-1, mbufs carved from the queues' regions), the headers it writes for tx, its options,
// and DPDK's environment (eal:). Reads nothing from the system.
#include <algorithm>
#include <cctype>

#include "engines/dpdk/limits.h"
#include "engines/dpdk/validate.h"
#include "netdaq/engines/dpdk.h"
#include "net/frame_headers.h"
#include "net/ip_address.h"
#include "net/mac_address.h"
#include "net/pci_address.h"

namespace netdaq::detail {

namespace {

constexpr const char* kPciForm = "a PCI address (0000:3b:00.0 or 3b:00.0: DDDD:BB:DD.F in hex, function 0..7)";
constexpr const char* kVdevForm =
    "a DPDK virtual device net_<driver><n>, optionally followed by ,key=value arguments (e.g. net_ring0, "
    "net_af_xdp0,iface=veth1,start_queue=0, net_tap0,iface=dtap0)";
constexpr const char* kDestinationForm = "udp://IPv4:PORT (e.g. udp://10.0.0.2:5000)";
constexpr uint32_t kTxHeaders = Ipv4UdpHeaders::kSize;  // Ethernet + IPv4 + UDP

std::string device_forms() { return std::string(kPciForm) + ", or " + kVdevForm; }

// "0000:3b:00.0" (domain filled in, lower case) for a PCI address (parse_pci, as the engine
// reads it), nullopt for anything else.
std::optional<std::string> pci_address(std::string_view s) {
  if (const auto pci = parse_pci(s)) return pci->to_string();
  return std::nullopt;
}

bool is_name_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; }

// The device name of a virtual device "net_ring0,key=value,...", or nullopt with *why set to
// what is wrong ("" when it is not of the form at all).
std::optional<std::string> vdev_name(const std::string& spec, std::string* why) {
  why->clear();
  const size_t comma = spec.find(',');
  const std::string name = spec.substr(0, comma);
  if (!name.starts_with("net_") || name.size() == 4 || !std::all_of(name.begin(), name.end(), is_name_char))
    return std::nullopt;
  if (name.size() > dpdk_limits::kMaxDeviceName) {
    *why = "; the device name '" + name + "' is longer than " + std::to_string(dpdk_limits::kMaxDeviceName) + " characters";
    return std::nullopt;
  }
  size_t start = comma;
  while (start != std::string::npos) {
    const size_t end = spec.find(',', start + 1);
    const std::string arg = spec.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
    const size_t eq = arg.find('=');
    const bool key_ok = eq != std::string::npos && eq > 0 &&
                        std::all_of(arg.begin(), arg.begin() + static_cast<std::ptrdiff_t>(eq), is_name_char);
    const bool value_ok = key_ok && eq + 1 < arg.size() && std::none_of(arg.begin(), arg.end(), [](char ch) {
                            return std::isspace(static_cast<unsigned char>(ch)) != 0;
                          });
    if (!value_ok) {
      *why = "; argument '" + arg + "' is not key=value";
      return std::nullopt;
    }
    start = end;
  }
  return name;
}

// What identifies the port's device: the PCI address (normalised) or the vdev's name.
std::optional<std::string> device_of(const std::string& address) {
  if (auto pci = pci_address(address)) return pci;
  std::string why;
  return vdev_name(address, &why);
}

void check_address(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const std::string key = path + ".address";
  if (iface.address.empty()) {
    c.error(key, "", "is required for the dpdk engine: " + device_forms());
    return;
  }
  std::string why;
  auto device = pci_address(iface.address);
  if (!device) device = vdev_name(iface.address, &why);
  if (!device) {
    c.error(key, iface.address, "must be " + device_forms() + why);
    return;
  }
  // One port per device: a second interface on it would configure the same port twice.
  const auto& interfaces = c.config().interfaces;
  const size_t index = static_cast<size_t>(&iface - interfaces.data());
  for (size_t j = 0; j < index && j < interfaces.size(); ++j) {
    const InterfaceConfig& other = interfaces[j];
    if (other.engine != "dpdk" || device_of(other.address) != device) continue;
    c.error(key, iface.address,
            "is the same device as interfaces[" + std::to_string(j) + "] ('" + other.name + "', address " +
                other.address + "): a DPDK port belongs to one interface; give that interface all its queues");
    return;
  }
}

std::string ids_text(const std::vector<uint32_t>& ids) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ids.size() && i < 8; ++i) parts.push_back(std::to_string(ids[i]));
  std::string s = join(parts);
  if (ids.size() > 8) s += ", ...";
  return s;
}

// DPDK numbers a port's rx queues 0..n-1, and its tx queues 0..n-1.
void check_queue_ids(Checker& c, const std::vector<QueueConfig>& queues, bool rx, const std::string& path) {
  const char* dir = rx ? "rx" : "tx";
  const size_t n = queues.size();
  if (n > dpdk_limits::kMaxQueues)
    c.error(path, std::to_string(n) + " queues",
            std::string("the dpdk engine opens at most ") + std::to_string(dpdk_limits::kMaxQueues) + " " + dir +
                " queues per port; has " + std::to_string(n));
  std::vector<bool> present(n, false);
  for (const auto& q : queues)
    if (q.id < n) present[q.id] = true;
  std::vector<uint32_t> missing;
  for (uint32_t id = 0; id < n; ++id)
    if (!present[id]) missing.push_back(id);
  for (size_t j = 0; j < n; ++j) {
    const uint16_t id = queues[j].id;
    if (id < n) continue;
    c.error(path + "[" + std::to_string(j) + "].id", std::to_string(id),
            (n == 1 ? std::string("must be 0") : "must be 0.." + std::to_string(n - 1)) +
                " on a dpdk interface: DPDK numbers a port's " + std::to_string(n) + " " + dir + " queue" +
                (n == 1 ? "" : "s") + " from 0 without gaps (missing: " + ids_text(missing) + ")");
  }
}

const char* kCpuKinds = "kind host, huge, pinned or mapped";

// Rx: mbufs are carved from the queue's regions, one DPDK mempool per region.
void check_rx_regions(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const Config& cfg = c.config();
  const uint32_t cache = iface.options.get<DpdkOptions>().mempool_cache;
  bool cache_reported = false;
  for (size_t j = 0; j < iface.rx.queues.size(); ++j) {
    const QueueConfig& q = iface.rx.queues[j];
    const std::string qpath = path + ".rx.queues[" + std::to_string(j) + "]";
    const size_t n = q.memory_regions.size();  // 1 or 2: check_queues reports other counts
    if (n == 2 && iface.options.get<DpdkOptions>().raw_frames)
      c.error(qpath + ".memory_regions", join(q.memory_regions),
              "dpdk.raw_frames hands over whole frames in one segment: give the queue one memory region, or set "
              "raw_frames: false for header-data split");
    for (size_t k = 0; k < n; ++k) {
      const MemoryRegionConfig* r = cfg.find_region(q.memory_regions[k]);
      if (!r) continue;  // reported by check_queues
      const std::string rkey = qpath + ".memory_regions[" + std::to_string(k) + "]";
      if (k == 0 && r->kind == MemoryKind::device)
        c.error(rkey, r->name,
                n == 1
                    ? "region '" + r->name +
                          "' is device memory; the one region of a dpdk rx queue must be CPU-readable (" + kCpuKinds +
                          "): the engine reads each packet's headers. To receive payloads into GPU memory, split "
                          "headers from data: memory_regions: [<a host region>, " +
                          r->name + "]"
                    : "region '" + r->name +
                          "' is device memory; the header region (the first of two) of a dpdk rx queue must be "
                          "CPU-readable (" +
                          kCpuKinds +
                          "): the engine reads the headers. Only the data region (the second) may be device memory");
      if (r->buf_size < dpdk_limits::kMinRxBufSize)
        c.error(rkey, r->name,
                "region '" + r->name + "' has buf_size " + std::to_string(r->buf_size) +
                    "; a dpdk rx queue needs buf_size >= " + std::to_string(dpdk_limits::kMinRxBufSize) + ": each mbuf keeps " +
                    std::to_string(dpdk_limits::kMbufHeadroom) +
                    " bytes of headroom (RTE_PKTMBUF_HEADROOM) in front of the packet");
      // rte_mempool_create() refuses a cache larger than num_bufs / 1.5.
      if (uint64_t{cache} * 3 > uint64_t{r->num_bufs} * 2 && !cache_reported) {
        cache_reported = true;
        c.error(path + ".dpdk.mempool_cache", std::to_string(cache),
                "is too large for region '" + r->name + "' (num_bufs " + std::to_string(r->num_bufs) +
                    ") of rx queue " + queue_label(iface, q, true) +
                    ": DPDK needs mempool_cache x 1.5 <= num_bufs; mempool_cache must be <= " +
                    std::to_string(uint64_t{r->num_bufs} * 2 / 3) + " (or raise num_bufs)");
      }
    }
  }
}

struct RegionUser {
  size_t iface_index;
  bool rx;
  size_t queue_index;
  size_t region_index;
};

std::string user_key(const RegionUser& u) {
  return "interfaces[" + std::to_string(u.iface_index) + (u.rx ? "].rx.queues[" : "].tx.queues[") +
         std::to_string(u.queue_index) + "].memory_regions[" + std::to_string(u.region_index) + "]";
}

// The engine hands every buffer of an rx queue's region to one DPDK mempool of the port: no
// queue of another interface, and no tx queue, can take buffers from it. The first dpdk rx
// queue that uses a region (interfaces in order, rx queues before tx queues) owns it; this
// checks the regions this interface owns, so each conflict is reported once.
void check_shared_regions(Checker& c, const InterfaceConfig& iface) {
  const Config& cfg = c.config();
  const auto& interfaces = cfg.interfaces;
  const size_t me = static_cast<size_t>(&iface - interfaces.data());
  std::vector<std::string> checked;
  for (const auto& own : iface.rx.queues) {
    for (const auto& name : own.memory_regions) {
      if (std::find(checked.begin(), checked.end(), name) != checked.end() || !cfg.find_region(name)) continue;
      checked.push_back(name);
      std::vector<RegionUser> users;
      for (size_t i = 0; i < interfaces.size(); ++i)
        for (bool rx : {true, false}) {
          const auto& queues = rx ? interfaces[i].rx.queues : interfaces[i].tx.queues;
          for (size_t j = 0; j < queues.size(); ++j)
            for (size_t k = 0; k < queues[j].memory_regions.size(); ++k)
              if (queues[j].memory_regions[k] == name) users.push_back({i, rx, j, k});
        }
      const auto owner = std::find_if(users.begin(), users.end(), [&](const RegionUser& u) {
        return u.rx && interfaces[u.iface_index].engine == "dpdk";
      });
      if (owner == users.end() || owner->iface_index != me) continue;
      const QueueConfig& owner_q = iface.rx.queues[owner->queue_index];
      for (const auto& u : users) {
        if (u.rx && u.iface_index == me) continue;
        const InterfaceConfig& other = interfaces[u.iface_index];
        const QueueConfig& q = (u.rx ? other.rx.queues : other.tx.queues)[u.queue_index];
        c.error(user_key(u), name,
                "region '" + name + "' is the buffer pool of dpdk rx queue " + queue_label(iface, owner_q, true) +
                    ", and the dpdk engine hands all of its buffers to one DPDK mempool of interface '" + iface.name +
                    "': it can be shared only with rx queues of that interface, not with " + (u.rx ? "rx" : "tx") +
                    " queue " + queue_label(other, q, u.rx) + "; give that queue a region of its own");
      }
    }
  }
}

// Tx: the engine writes the Ethernet/IPv4/UDP headers in front of the payload, in its buffer.
void check_tx_regions(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  for (size_t j = 0; j < iface.tx.queues.size(); ++j) {
    const QueueConfig& q = iface.tx.queues[j];
    const std::string qpath = path + ".tx.queues[" + std::to_string(j) + "]";
    if (q.memory_regions.size() == 2)
      c.error(qpath + ".memory_regions", join(q.memory_regions),
              "a dpdk tx queue takes exactly 1 memory region (has 2): the engine writes the " +
                  std::to_string(kTxHeaders) +
                  " bytes of Ethernet/IPv4/UDP headers in front of each payload, in the "
                  "same buffer");
    for (size_t k = 0; k < q.memory_regions.size(); ++k) {
      const MemoryRegionConfig* r = c.config().find_region(q.memory_regions[k]);
      if (!r) continue;
      const std::string rkey = qpath + ".memory_regions[" + std::to_string(k) + "]";
      if (r->kind == MemoryKind::device)
        c.error(rkey, r->name,
                "region '" + r->name + "' is device memory; a dpdk tx queue needs CPU-writable memory (" + kCpuKinds +
                    "): the engine writes the headers in front of each payload");
      if (r->buf_size <= kTxHeaders)
        c.error(rkey, r->name,
                "region '" + r->name + "' has buf_size " + std::to_string(r->buf_size) +
                    "; a dpdk tx queue needs buf_size >= " + std::to_string(kTxHeaders + 1) + ": " +
                    std::to_string(kTxHeaders) + " bytes of Ethernet/IPv4/UDP headers and the payload");
    }
  }
}

void check_destination(Checker& c, const InterfaceConfig& iface, const std::string& path, bool required) {
  const std::string key = path + ".tx.destination";
  const std::string& url = iface.tx.destination;
  if (url.empty()) {
    if (required)
      c.error(key, "",
              std::string("is required for the dpdk engine when tx queues are configured: ") + kDestinationForm +
                  " (optional only with dpdk.loopback: software)");
    return;
  }
  check_header_destination(c, key, url, "dpdk", kDestinationForm, true);
}

// DPDK has no neighbour table and a port has no address: tx needs both ends spelled out,
// except in software loopback, where the frames never leave the engine.
void check_tx_headers(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const DpdkOptions& d = iface.options.get<DpdkOptions>();
  if (d.tx_raw_frames) {  // the application writes every header: the engine's would do nothing
    const char* why = "is not used with dpdk.tx_raw_frames (the application writes the whole frame): remove it";
    if (!iface.tx.destination.empty()) c.error(path + ".tx.destination", iface.tx.destination, why);
    if (!d.dst_mac.empty()) c.error(path + ".dpdk.dst_mac", d.dst_mac, why);
    if (!d.src_ip.empty()) c.error(path + ".dpdk.src_ip", d.src_ip, why);
    if (d.src_port) c.error(path + ".dpdk.src_port", std::to_string(d.src_port), why);
    return;
  }
  const bool required = !iface.tx.queues.empty() && d.loopback != DpdkLoopback::software;
  check_destination(c, iface, path, required);
  const std::string mac_key = path + ".dpdk.dst_mac";
  if (d.dst_mac.empty()) {
    if (required)
      c.error(mac_key, "",
              "is required for tx on a dpdk interface: the destination MAC address like 02:00:00:00:00:01 (DPDK has "
              "no neighbour table to look it up; optional only with loopback: software)");
  } else if (!parse_mac(d.dst_mac)) {
    c.error(mac_key, d.dst_mac, "must be a MAC address like 02:00:00:00:00:01 (six hex bytes separated by ':')");
  }
  const std::string ip_key = path + ".dpdk.src_ip";
  if (d.src_ip.empty()) {
    if (required)
      c.error(ip_key, "",
              "is required for tx on a dpdk interface: the source IPv4 address like 10.0.0.1 (a DPDK port has no "
              "interface address; optional only with loopback: software)");
  } else if (!parse_ipv4(d.src_ip)) {
    c.error(ip_key, d.src_ip, "must be an IPv4 address (e.g. 10.0.0.1): the dpdk engine writes IPv4 headers only");
  }
}

void check_options(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const DpdkOptions& d = iface.options.get<DpdkOptions>();
  const std::string p = path + ".dpdk";
  c.range(p + ".rx_desc", d.rx_desc, dpdk_limits::desc);
  c.range(p + ".tx_desc", d.tx_desc, dpdk_limits::desc);
  c.range(p + ".mempool_cache", d.mempool_cache, dpdk_limits::mempool_cache);
  if (d.mtu != 0 && (d.mtu < dpdk_limits::kMinMtu || d.mtu > dpdk_limits::kMaxMtu))
    c.error(p + ".mtu", std::to_string(d.mtu),
            "must be 0 (leave the port's MTU) or " + std::to_string(dpdk_limits::kMinMtu) + ".." + std::to_string(dpdk_limits::kMaxMtu));
  if (static_cast<size_t>(d.loopback) >= dpdk_limits::kLoopbackNames.size())
    c.error(p + ".loopback", std::to_string(static_cast<int>(d.loopback)),
            "must be one of: " + join(std::span<const std::string_view>(dpdk_limits::kLoopbackNames)));
  if (d.isolate && iface.rx.flows.empty())
    c.error(p + ".isolate", "true",
            "needs at least one rx.flows entry: in isolated mode only the flows' packets reach netdaq (the rest goes "
            "to the kernel), so without flows the rx queues would receive nothing");
  if (d.loopback == DpdkLoopback::software) {
    std::vector<std::string> rx_ids;
    for (const auto& q : iface.rx.queues) add_unique(rx_ids, std::to_string(q.id));
    for (size_t j = 0; j < iface.tx.queues.size(); ++j) {
      const uint16_t id = iface.tx.queues[j].id;
      const bool found =
          std::any_of(iface.rx.queues.begin(), iface.rx.queues.end(), [&](const QueueConfig& q) { return q.id == id; });
      if (!found)
        c.error(path + ".tx.queues[" + std::to_string(j) + "].id", std::to_string(id),
                "dpdk.loopback: software hands the packets of tx queue " + std::to_string(id) +
                    " to the rx queue of the same id, and this interface has no rx queue " + std::to_string(id) +
                    " (rx queue ids: " + (rx_ids.empty() ? std::string("none") : join(rx_ids)) + ")");
    }
  }
  const size_t flows = iface.rx.flows.size();
  if (flows > dpdk_limits::kMaxFlows)
    c.error(path + ".rx.flows", std::to_string(flows) + " flows",
            "the dpdk engine creates at most " + std::to_string(dpdk_limits::kMaxFlows) + " flow rules per interface; has " +
                std::to_string(flows));
}

bool uses_dpdk(const Config& cfg) {
  return std::any_of(cfg.interfaces.begin(), cfg.interfaces.end(),
                     [](const InterfaceConfig& i) { return i.engine == "dpdk"; });
}

// eal: keys that differ from their defaults.
void check_eal_cores(Checker& c, const EalConfig& e) {
  std::vector<std::string> cores;
  for (size_t k = 0; k < e.cores.size(); ++k) {
    const std::string key = "eal.cores[" + std::to_string(k) + "]";
    c.range(key, e.cores[k], dpdk_limits::eal_core);
    add_unique(cores, std::to_string(e.cores[k]));
    for (size_t j = 0; j < k; ++j) {
      if (e.cores[j] != e.cores[k]) continue;
      c.error(key, std::to_string(e.cores[k]), "duplicate CPU (also eal.cores[" + std::to_string(j) + "])");
      break;
    }
  }
  c.range("eal.main_core", e.main_core, limits::cpu_core);
  if (e.main_core >= 0 && !e.cores.empty() && std::find(e.cores.begin(), e.cores.end(), e.main_core) == e.cores.end())
    c.error("eal.main_core", std::to_string(e.main_core),
            "must be one of eal.cores (" + join(cores) +
                "): the main lcore is one of EAL's lcores; or leave main_core out (default: the first of cores)");
}

void check_eal_devices(Checker& c, const EalConfig& e) {
  for (size_t k = 0; k < e.allow.size(); ++k)
    if (!pci_address(e.allow[k]))
      c.error("eal.allow[" + std::to_string(k) + "]", e.allow[k], std::string("must be ") + kPciForm);
  const auto& interfaces = c.config().interfaces;
  std::vector<std::string> names;
  for (size_t k = 0; k < e.vdevs.size(); ++k) {
    const std::string key = "eal.vdevs[" + std::to_string(k) + "]";
    std::string why;
    const auto name = vdev_name(e.vdevs[k], &why);
    names.push_back(name.value_or(""));
    if (!name) {
      c.error(key, e.vdevs[k], std::string("must be ") + kVdevForm + why);
      continue;
    }
    bool reported = false;
    for (size_t j = 0; j < k && !reported; ++j) {
      if (names[j] != *name) continue;
      c.error(key, e.vdevs[k], "duplicate virtual device '" + *name + "' (also eal.vdevs[" + std::to_string(j) + "])");
      reported = true;
    }
    for (size_t i = 0; i < interfaces.size() && !reported; ++i) {
      if (interfaces[i].engine != "dpdk" || device_of(interfaces[i].address) != name) continue;
      c.error(key, e.vdevs[k],
              "is already the device of interfaces[" + std::to_string(i) + "] ('" + interfaces[i].name +
                  "'): netdaq hands each dpdk interface's own device to EAL; list only other devices here");
      reported = true;
    }
  }
}

}  // namespace

void check_dpdk_engine(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  check_address(c, iface, path);
  check_queue_ids(c, iface.rx.queues, true, path + ".rx.queues");
  check_queue_ids(c, iface.tx.queues, false, path + ".tx.queues");
  check_rx_regions(c, iface, path);
  check_shared_regions(c, iface);
  check_tx_regions(c, iface, path);
  check_tx_headers(c, iface, path);
  check_options(c, iface, path);
}

void check_eal(Checker& c) {
  const EalConfig& e = c.config().options.get<EalConfig>();
  if (const auto set = set_eal_keys(e); !set.empty() && !uses_dpdk(c.config()))
    c.error("eal", join(set),
            "eal: configures DPDK; no interface uses engine: dpdk (remove eal:, or set engine: dpdk on an interface)");
  check_eal_cores(c, e);
  c.range("eal.memory_mb", e.memory_mb, dpdk_limits::eal_memory_mb);
  if (e.file_prefix.size() > dpdk_limits::kMaxEalFilePrefix || !std::all_of(e.file_prefix.begin(), e.file_prefix.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-';
      }))
    c.error("eal.file_prefix", e.file_prefix,
            "must be up to " + std::to_string(dpdk_limits::kMaxEalFilePrefix) +
                " characters of A-Z, a-z, 0-9, '_' and '-' (it names EAL's runtime files; empty: netdaq-<pid>)");
  check_eal_devices(c, e);
  for (size_t k = 0; k < e.args.size(); ++k) {
    const std::string key = "eal.args[" + std::to_string(k) + "]";
    if (e.args[k].empty())
      c.error(key, "", "must not be empty: an EAL option like --log-level=pmd,8");
    else if (e.args[k][0] != '-')
      c.error(key, e.args[k],
              "must be an EAL option starting with '-' (e.g. --log-level=pmd,8 or --iova-mode=va); write an "
              "option's value in the same entry (--option=value)");
  }
}

}  // namespace netdaq::detail
