// Options of the pcap engine (replays a pcap or pcapng capture file as an rx source);
// docs/pcap-engine.md. The block `pcap:` of an interface; an error on another engine's
// interface when set.
#pragma once

#include <cstdint>
#include <string>

namespace netdaq {

// The engine's name (InterfaceConfig::engine).
inline constexpr const char* kPcapEngine = "pcap";

// What each packet of the queue holds.
enum class PcapDeliver : uint8_t {
  payloads,  // the UDP payload (Packet::frame() still gives the whole frame); other records are malformed
  frames,    // the whole Ethernet frame, of any protocol
};

// When each record is delivered.
enum class PcapPace : uint8_t {
  asap,      // as fast as the application polls
  recorded,  // at the capture's own pace (divided by speed)
};

struct PcapOptions {
  static constexpr const char* kKey = "pcap";
  std::string file;                              // the capture (pcap or pcapng, Ethernet); required
  PcapDeliver deliver = PcapDeliver::payloads;
  PcapPace pace = PcapPace::asap;
  double speed = 1.0;                            // pace recorded: 2 = twice as fast as recorded
  uint32_t loop = 1;                             // passes over the file (0: until the session stops)
  bool check_file = true;                        // read every record once at open: a truncated or
                                                 // corrupt file fails the open, naming the record
};

}  // namespace netdaq
