// rdma engine: its addresses, the connection mode's parameters, queue-pair depths and the
// memory its queues register. Reads nothing from the system.
#include "engines/rdma/validate.h"

#include <algorithm>

#include "engines/rdma/limits.h"
#include "net/endpoint.h"
#include "netdaq/engines/rdma.h"

namespace netdaq::detail {

namespace {

// An rdma:// endpoint naming one local or remote host by its IP (the device is the one that
// holds the IP, so no host names and no wildcard). Reports under `key`.
void check_endpoint(Checker& c, const std::string& key, const std::string& url, bool port_required,
                    const std::string& why) {
  if (url.empty()) {
    c.error(key, "", "is required for the rdma engine " + why +
                         (port_required ? ": rdma://IP:PORT" : ": rdma://IP (the RDMA device holding that IP)"));
    return;
  }
  std::string error;
  const auto ep = parse_rdma_endpoint(url, port_required, &error);
  if (!ep) return c.error(key, url, error);
  if (!ep->ip)
    return c.error(key, url, "must name an IP address, not a host name: the rdma engine finds its device by the IP");
  if (const std::string bad = not_unicast(*ep->ip); !bad.empty())
    return c.error(key, url, "must be a unicast address; " + ep->host + " is " + bad + " (RDMA connects two hosts)");
  if (port_required && ep->port == 0) c.error(key, url, "must have a port 1..65535 (the rdma_cm port)");
}

// One region per queue (no scatter-gather over two). Device memory is registered through
// dma-buf or nvidia-peermem when the queue opens (device_memory.cpp); that needs the GPU and
// the NIC, so it is checked there, not here.
void check_queue_memory(Checker& c, const std::vector<QueueConfig>& queues, const std::string& path) {
  for (size_t j = 0; j < queues.size(); ++j) {
    const std::string qpath = path + "[" + std::to_string(j) + "].memory_regions";
    if (queues[j].memory_regions.size() > 1)
      c.error(qpath, std::to_string(queues[j].memory_regions.size()) + " regions",
              "the rdma engine takes one region per queue (no header-data split)");
  }
}

void check_manual(Checker& c, const RdmaOptions& o, const std::string& path) {
  if (o.peer_file.empty())
    c.error(path + ".peer_file", "",
            "is required with connect: manual: a JSON file with the peer's qpn, psn and gid (e.g. the peer's local_file)");
  if (std::ranges::find(rdma_limits::kMtus, o.mtu) == rdma_limits::kMtus.end())
    c.error(path + ".mtu", std::to_string(o.mtu), "must be one of 256, 512, 1024, 2048, 4096 (the path MTU)");
}

// The declared ranges (option_table.h words the message; the check is here, as in every engine).
void check_ranges(Checker& c, const RdmaOptions& o, const std::string& path) {
  namespace lim = rdma_limits;
  c.range(path + ".send_depth", o.send_depth, lim::depth);
  c.range(path + ".recv_depth", o.recv_depth, lim::depth);
  c.range(path + ".max_inline", o.max_inline, lim::max_inline);
  c.range(path + ".signal_every", o.signal_every, lim::depth);
  c.range(path + ".min_rnr_timer", o.min_rnr_timer, lim::min_rnr_timer);
  c.range(path + ".timeout_ms", o.timeout_ms, lim::timeout_ms);
  c.range(path + ".gid_index", o.gid_index, lim::gid_index);
  c.range(path + ".local_psn", o.local_psn, lim::psn);
}

}  // namespace

void check_rdma_engine(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const RdmaOptions& o = iface.options.get<RdmaOptions>();
  const std::string opath = path + ".rdma";
  const bool rx = !iface.rx.queues.empty(), tx = !iface.tx.queues.empty();
  if (o.connect == RdmaConnect::cm) {
    // rx queues accept on the address (its port required); tx queues connect from it (its IP:
    // the source address, which picks the local device and its route).
    if (rx || !iface.address.empty())
      check_endpoint(c, path + ".address", iface.address, rx, "when rx queues are configured (where they accept)");
    if (tx || !iface.tx.destination.empty())
      check_endpoint(c, path + ".tx.destination", iface.tx.destination, true,
                     "when tx queues are configured (where they connect)");
  } else {
    if (rx || tx || !iface.address.empty())
      check_endpoint(c, path + ".address", iface.address, false, "with connect: manual");
    if (!iface.tx.destination.empty())
      c.error(path + ".tx.destination", iface.tx.destination,
              "must be empty with connect: manual: the peer's queue pairs come from rdma.peer_file");
    check_manual(c, o, opath);
  }
  check_ranges(c, o, opath);
  if (o.signal_every > o.send_depth)
    c.error(opath + ".signal_every", std::to_string(o.signal_every),
            "must be <= rdma.send_depth (" + std::to_string(o.send_depth) +
                "): a send queue full of unsignalled work requests never completes");
  check_queue_memory(c, iface.rx.queues, path + ".rx.queues");
  check_queue_memory(c, iface.tx.queues, path + ".tx.queues");
}

}  // namespace netdaq::detail
