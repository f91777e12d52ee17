#include "replay_config.h"

#include <algorithm>

namespace netdaq::cli {

namespace {

InterfaceConfig& choose_interface(Config& cfg, const std::string& name) {
  if (!name.empty()) {
    for (auto& i : cfg.interfaces)
      if (i.name == name) return i;
    throw Error(Errc::invalid_config, "--interface " + name + ": " + cfg.source + " has no interface of that name");
  }
  std::vector<InterfaceConfig*> rx;
  for (auto& i : cfg.interfaces)
    if (!i.rx.queues.empty()) rx.push_back(&i);
  if (rx.size() == 1) return *rx[0];
  if (rx.empty()) throw Error(Errc::invalid_config, cfg.source + " has no interface with rx queues to feed");
  std::string names;
  for (auto* i : rx) names += (names.empty() ? "" : ", ") + i->name;
  throw Error(Errc::invalid_config, cfg.source + " has rx queues on several interfaces (" + names +
                                        "): choose one with --interface NAME");
}

// Keeps the first rx queue (the pcap engine reads its file into one), with the flows and the
// GPU frames (rx.reorder) of that queue.
void keep_first_queue(InterfaceConfig& iface) {
  if (iface.rx.queues.empty()) throw Error(Errc::invalid_config, "interface " + iface.name + " has no rx queues");
  iface.rx.queues.resize(1);
  const uint16_t id = iface.rx.queues[0].id;
  auto& reorder = iface.rx.reorder;
  reorder.erase(std::remove_if(reorder.begin(), reorder.end(), [id](const ReorderConfig& r) { return r.queue != id; }),
                reorder.end());
  for (auto& f : iface.rx.flows) {
    f.queue = id;
    f.queues.clear();
  }
}

}  // namespace

std::string feed_from_capture(Config& cfg, const ReplaySettings& s) {
  InterfaceConfig iface = choose_interface(cfg, s.interface);
  keep_first_queue(iface);
  iface.engine = kPcapEngine;
  iface.tx = TxConfig{};
  // The address filters the file's UDP packets when it is udp://IP:PORT; anything else
  // (a netdev, a PCI address, tcp://) says nothing about them.
  if (s.all || iface.address.rfind("udp://", 0) != 0) iface.address.clear();
  iface.options = OptionBlocks{};  // the replaced engine's options mean nothing to pcap
  PcapOptions& p = iface.options.get<PcapOptions>();
  p.file = s.file;
  p.deliver = s.frames ? PcapDeliver::frames : PcapDeliver::payloads;
  p.pace = s.pace;
  p.speed = s.speed;
  p.loop = s.loop;
  cfg.interfaces = {std::move(iface)};
  return cfg.interfaces[0].name;
}

}  // namespace netdaq::cli
