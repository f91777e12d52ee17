// pcap engine: the file, pace and speed, the address used as a filter, one rx queue, no tx.
#include <cmath>

#include "engines/pcap/validate.h"
#include "net/endpoint.h"
#include "netdaq/engines/pcap.h"

namespace netdaq::detail {

namespace {

// address (optional): udp://IP:PORT, packets to other destinations are not delivered.
void check_filter_address(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  if (iface.address.empty()) return;
  std::string error;
  auto ep = parse_endpoint(iface.address, &error);
  if (!ep) {
    c.error(path + ".address", iface.address, error + " (the pcap engine delivers packets sent to this address)");
    return;
  }
  if (ep->protocol != Protocol::udp)
    c.error(path + ".address", iface.address, "the pcap engine replays UDP: use udp://IP:PORT (or leave it empty)");
  else if (!ep->ip)
    c.error(path + ".address", iface.address,
            "must be an IP literal (0.0.0.0 or :: for any address): the pcap engine filters by it, it resolves no names");
}

}  // namespace

void check_pcap_engine(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const PcapOptions& o = iface.options.get<PcapOptions>();
  if (o.file.empty() && !iface.rx.queues.empty())
    c.error(path + ".pcap.file", "", "is required for the pcap engine: the pcap or pcapng file to replay");
  if (!std::isfinite(o.speed) || o.speed <= 0)
    c.error(path + ".pcap.speed", show(o.speed), "must be a number > 0 (2 = twice as fast as recorded)");
  else if (o.speed != 1.0 && o.pace != PcapPace::recorded)
    c.error(path + ".pcap.speed", show(o.speed), "is only used with pace: recorded (pace is asap)");
  if (static_cast<size_t>(o.deliver) > 1) c.error(path + ".pcap.deliver", "", "must be payloads or frames");
  if (static_cast<size_t>(o.pace) > 1) c.error(path + ".pcap.pace", "", "must be asap or recorded");
  if (iface.rx.queues.size() > 1)
    c.error(path + ".rx.queues", std::to_string(iface.rx.queues.size()) + " queues",
            "the pcap engine reads its file into one rx queue: configure 1");
  for (size_t j = 0; j < iface.rx.queues.size(); ++j)
    if (iface.rx.queues[j].memory_regions.size() > 1)
      c.error(path + ".rx.queues[" + std::to_string(j) + "].memory_regions", join(iface.rx.queues[j].memory_regions),
              "the pcap engine needs 1 memory region per queue (no header-data split)");
  if (!iface.tx.queues.empty())
    c.error(path + ".tx.queues", std::to_string(iface.tx.queues.size()) + " queues",
            "the pcap engine only receives (it replays a file): remove the tx queues");
  check_filter_address(c, iface, path);
}

}  // namespace netdaq::detail
