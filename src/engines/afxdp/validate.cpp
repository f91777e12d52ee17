// afxdp engine: the netdev, the AF_XDP rings and the UMEM they share, the headers it writes
// for tx, and the sizes of its eBPF program's maps. Reads nothing from the system.
#include <algorithm>
#include <bit>
#include <cctype>

#include "engines/afxdp/validate.h"
#include "net/ip_address.h"
#include "net/mac_address.h"
#include "engines/afxdp/limits.h"
#include "netdaq/engines/afxdp.h"

namespace netdaq::detail {

namespace {

constexpr const char* kNetdevForm =
    "a netdev name (e.g. eth1): 1..15 characters, not '.' or '..', without '/', ':' or spaces";
constexpr const char* kDestinationForm = "udp://IP:PORT (IPv6: udp://[fd00::1]:PORT)";

// The kernel's dev_valid_name(), so a bad name fails here and not when the session opens.
bool is_netdev_name(const std::string& name) {
  if (name.empty() || name.size() > afxdp_limits::kMaxNetdevName || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(),
                      [](char ch) { return ch == '/' || ch == ':' || std::isspace(static_cast<unsigned char>(ch)); });
}

void check_address(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const std::string key = path + ".address";
  if (iface.address.empty())
    c.error(key, "", std::string("is required for the afxdp engine: ") + kNetdevForm);
  else if (iface.address.find("://") != std::string::npos)
    c.error(key, iface.address,
            "must be a netdev name (e.g. eth1), not an endpoint: the afxdp engine receives from the netdev's queues "
            "and rx.flows choose the packets");
  else if (!is_netdev_name(iface.address))
    c.error(key, iface.address, std::string("must be ") + kNetdevForm);
}

// AF_XDP ring sizes must be powers of two; the limits keep the rings and the UMEM sensible.
void check_ring(Checker& c, const std::string& key, uint32_t size) {
  if (!afxdp_limits::xsk_ring.contains(uint64_t{size}) || !std::has_single_bit(size))
    c.error(key, std::to_string(size),
            "must be a power of two " + std::to_string(afxdp_limits::xsk_ring.min) + ".." +
                std::to_string(afxdp_limits::xsk_ring.max) + " (AF_XDP ring descriptors)");
}

template <class E, size_t N>
void check_choice(Checker& c, const std::string& key, E value, const std::array<std::string_view, N>& names) {
  if (static_cast<size_t>(value) >= N)
    c.error(key, std::to_string(static_cast<int>(value)),
            "must be one of: " + join(std::span<const std::string_view>(names)));
}

void check_options(Checker& c, const AfxdpOptions& a, const std::string& path) {
  check_choice(c, path + ".attach", a.attach, afxdp_limits::kXdpAttachNames);
  check_choice(c, path + ".mode", a.mode, afxdp_limits::kXskModeNames);
  // Generic XDP hands the socket a copy of every packet: zero-copy would be a promise not kept.
  if (a.attach == XdpAttach::generic && a.mode == XskMode::zero_copy)
    c.error(path + ".mode", "zero_copy",
            "needs driver XDP, but attach is generic (which copies every packet): set attach to native or auto, "
            "or mode to copy or auto");
  c.range(path + ".busy_poll_budget", a.busy_poll_budget, afxdp_limits::busy_poll_budget);
  check_ring(c, path + ".rx_ring", a.rx_ring);
  check_ring(c, path + ".fill_ring", a.fill_ring);
  check_ring(c, path + ".tx_ring", a.tx_ring);
  check_ring(c, path + ".comp_ring", a.comp_ring);
}

// The UMEM of each queue: one region, host memory, chunks of 2 KiB or 4 KiB, and at least as
// many buffers as the ring that hands them between the application and the kernel (rx: the
// fill ring; tx: the completion ring).
void check_umem(Checker& c, const InterfaceConfig& iface, bool rx, const std::string& path) {
  const auto& queues = rx ? iface.rx.queues : iface.tx.queues;
  const uint32_t ring = rx ? iface.options.get<AfxdpOptions>().fill_ring : iface.options.get<AfxdpOptions>().comp_ring;
  const char* ring_name = rx ? "fill_ring" : "comp_ring";
  bool ring_reported = false;
  for (size_t j = 0; j < queues.size(); ++j) {
    const QueueConfig& q = queues[j];
    const std::string qpath = path + (rx ? ".rx.queues[" : ".tx.queues[") + std::to_string(j) + "]";
    if (q.memory_regions.size() == 2)
      c.error(qpath + ".memory_regions", join(q.memory_regions),
              "the afxdp engine takes exactly 1 memory region per queue (has 2): AF_XDP cannot split headers from "
              "data; use the dpdk engine for header-data split");
    for (size_t k = 0; k < q.memory_regions.size(); ++k) {
      const MemoryRegionConfig* r = c.config().find_region(q.memory_regions[k]);
      if (!r) continue;  // reported by check_queues
      const std::string rkey = qpath + ".memory_regions[" + std::to_string(k) + "]";
      if (std::find(afxdp_limits::kBufSizes.begin(), afxdp_limits::kBufSizes.end(), r->buf_size) == afxdp_limits::kBufSizes.end())
        c.error(rkey, r->name,
                "region '" + r->name + "' has buf_size " + std::to_string(r->buf_size) +
                    "; the afxdp engine needs buf_size 2048 or 4096 (an AF_XDP UMEM chunk is a power of two from "
                    "2 KiB up to the 4 KiB page)");
      if (ring > r->num_bufs && !ring_reported) {
        ring_reported = true;
        c.error(path + ".afxdp." + ring_name, std::to_string(ring),
                "UMEM too small for the rings: region '" + r->name + "' has num_bufs " + std::to_string(r->num_bufs) +
                    ", fewer than " + ring_name + " " + std::to_string(ring) + " of " + (rx ? "rx" : "tx") + " queue " +
                    queue_label(iface, q, rx) + "; " + ring_name + " must be <= " + std::to_string(r->num_bufs) +
                    " (or raise num_bufs)");
      }
    }
  }
}

// The destination of the headers the engine writes: a unicast IP literal over UDP.
std::optional<IpAddress> check_destination(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const std::string key = path + ".tx.destination";
  const std::string& url = iface.tx.destination;
  if (url.empty()) {
    if (!iface.tx.queues.empty())
      c.error(key, "",
              std::string("is required for the afxdp engine when tx queues are configured: ") + kDestinationForm);
    return std::nullopt;
  }
  return check_header_destination(c, key, url, "afxdp", kDestinationForm, false);
}

// tx_raw_frames: the application writes every header, so the engine's header options would
// silently do nothing.
void check_raw_frames(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const AfxdpOptions& a = iface.options.get<AfxdpOptions>();
  const char* why = "is not used with afxdp.tx_raw_frames (the application writes the whole frame): remove it";
  if (!iface.tx.destination.empty()) c.error(path + ".tx.destination", iface.tx.destination, why);
  if (!a.dst_mac.empty()) c.error(path + ".afxdp.dst_mac", a.dst_mac, why);
  if (!a.src_ip.empty()) c.error(path + ".afxdp.src_ip", a.src_ip, why);
  if (a.src_port) c.error(path + ".afxdp.src_port", std::to_string(a.src_port), why);
}

void check_tx_headers(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const AfxdpOptions& a = iface.options.get<AfxdpOptions>();
  if (a.tx_raw_frames) return check_raw_frames(c, iface, path);
  const auto destination = check_destination(c, iface, path);
  if (!a.dst_mac.empty() && !parse_mac(a.dst_mac))
    c.error(path + ".afxdp.dst_mac", a.dst_mac,
            "must be a MAC address like 02:00:00:00:00:01 (six hex bytes separated by ':')");
  if (a.src_ip.empty()) return;
  const auto src = parse_ip(a.src_ip);
  if (!src)
    c.error(path + ".afxdp.src_ip", a.src_ip, "must be an IPv4 or IPv6 address (e.g. 10.0.0.1 or fd00::1)");
  else if (destination && src->family != destination->family)
    c.error(path + ".afxdp.src_ip", a.src_ip,
            std::string("must be an ") + family_name(destination->family) + " address like tx.destination (" +
                iface.tx.destination + "): source and destination share one IP header");
}

// The eBPF program redirects to an XSK map indexed by NIC queue id.
void check_rx_queue_ids(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  for (size_t j = 0; j < iface.rx.queues.size(); ++j) {
    const uint16_t id = iface.rx.queues[j].id;
    if (id >= afxdp_limits::kMaxRxQueues)
      c.error(path + ".rx.queues[" + std::to_string(j) + "].id", std::to_string(id),
              "must be 0.." + std::to_string(afxdp_limits::kMaxRxQueues - 1) +
                  " for the afxdp engine (a NIC rx queue id; its eBPF program has " +
                  std::to_string(afxdp_limits::kMaxRxQueues) + " AF_XDP socket slots)");
  }
}

void check_flow_count(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const size_t n = iface.rx.flows.size();
  if (n > afxdp_limits::kMaxFlows)
    c.error(path + ".rx.flows", std::to_string(n) + " flows",
            "the afxdp engine matches at most " + std::to_string(afxdp_limits::kMaxFlows) +
                " flows per interface (the size of its eBPF flow table); has " + std::to_string(n));
}

}  // namespace

void check_afxdp_engine(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  check_address(c, iface, path);
  check_options(c, iface.options.get<AfxdpOptions>(), path + ".afxdp");
  check_umem(c, iface, true, path);
  check_umem(c, iface, false, path);
  check_tx_headers(c, iface, path);
  check_rx_queue_ids(c, iface, path);
  check_flow_count(c, iface, path);
}

}  // namespace netdaq::detail
