// The pcap engine: replays a pcap or pcapng capture file (pcap.file) into one rx queue, as UDP
// payloads or whole Ethernet frames, as fast as polled or at the recorded pace, for one or more
// passes; the queue is finished() at the end (docs/pcap-engine.md).
//
//   address: udp://IP:PORT  optional: only UDP sent to IP (0.0.0.0 / ::: any) and PORT (0: any)
//                           is delivered; rx.flows further select and label packets
#include "core/log.h"
#include "engines/pcap/ports.h"
#include "net/endpoint.h"

namespace netdaq::detail {
namespace pcap_engine {
namespace {

AddressFilter filter_of(const InterfaceConfig& iface, const std::string& context) {
  AddressFilter f;
  if (iface.address.empty()) return f;
  std::string error;
  const auto ep = parse_endpoint(iface.address, &error);
  if (!ep || !ep->ip)
    throw Error(Errc::invalid_config, context + ": address '" + iface.address + "': " +
                                          (ep ? "must be an IP literal" : error));
  if (!ep->ip->is_unspecified()) f.ip = ep->ip;
  f.port = ep->port;
  return f;
}

class PcapEngine final : public Engine {
 public:
  explicit PcapEngine(const InterfaceConfig& iface) : iface_(iface) {}

  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override {
    const std::string context = "pcap engine: " + q.name;
    if (q.segments != 1 || !q.pools[0])
      throw Error(Errc::invalid_config, context + ": the pcap engine needs 1 memory region per queue");
    if (opened_)
      throw Error(Errc::invalid_config, context + ": the pcap engine reads its file into one rx queue only");
    const PcapOptions& o = iface_.options.get<PcapOptions>();
    if (o.file.empty()) throw Error(Errc::invalid_config, context + ": pcap.file is empty: name the capture to replay");
    auto port = open_pcap_rx(q, o, filter_of(iface_, context), context);
    opened_ = true;
    return port;
  }

  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override {
    throw Error(Errc::unsupported, "pcap engine: " + q.name +
                                       ": the pcap engine only receives (it replays a file)");
  }

 private:
  const InterfaceConfig& iface_;
  bool opened_ = false;
};

}  // namespace
}  // namespace pcap_engine

void register_pcap_engine() {
  register_engine(kPcapEngine, [](const Config&, const InterfaceConfig& iface) -> std::unique_ptr<Engine> {
    return std::make_unique<pcap_engine::PcapEngine>(iface);
  });
}

}  // namespace netdaq::detail
