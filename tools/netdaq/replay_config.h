// `netdaq replay`: how a config is turned into one fed from a capture file. The rx interface
// (the only one with rx queues, or --interface) gets the pcap engine reading the file; the
// config's other interfaces and every tx queue go (a replay only receives).
#pragma once

#include <string>

#include "netdaq/netdaq.h"

namespace netdaq::cli {

struct ReplaySettings {
  std::string file;
  std::string interface;          // "" : the config's one interface with rx queues
  PcapPace pace = PcapPace::asap;
  double speed = 1.0;
  uint32_t loop = 1;
  bool frames = false;            // whole frames instead of UDP payloads
  bool all = false;               // ignore the interface's address (deliver every UDP payload)
};

// Throws Error(invalid_config) when no interface (or several) could be chosen.
// Returns the chosen interface's name.
std::string feed_from_capture(Config& cfg, const ReplaySettings& s);

}  // namespace netdaq::cli
