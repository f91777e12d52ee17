// pcap engine: the rx port (rx.cpp) and what the engine (engine.cpp) hands it.
//
//   pcap_reader.cpp  libpcap offline reading: pcap and pcapng, nanosecond timestamps, errors
//                    naming the file and the record number
//   rx.cpp           records -> pool buffers: UDP payloads or whole frames, filters, pacing,
//                    passes over the file, drop reasons, end of stream
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/engine.h"
#include "engines/pcap/pcap_reader.h"
#include "net/ip_address.h"
#include "netdaq/engines/pcap.h"

namespace netdaq::detail::pcap_engine {

// What the interface's address lets through (udp://IP:PORT; unspecified IP / port 0: any).
struct AddressFilter {
  std::optional<IpAddress> ip;  // nullopt: any destination address
  uint16_t port = 0;            // 0: any destination port
  bool active() const noexcept { return ip || port; }
};

// What check_file learnt from reading the whole file once at open.
struct FileSummary {
  bool scanned = false;
  uint64_t records = 0;
  uint64_t first_ns = 0, last_ns = 0;
};

// Reads the whole file once: throws Error naming the file and the record number of a truncated
// or corrupt record, or naming a link type other than Ethernet.
FileSummary scan_file(const std::string& path, const std::string& context);

std::unique_ptr<RxPort> open_pcap_rx(const QueueResources& q, const PcapOptions& o, const AddressFilter& filter,
                                     const std::string& context);

}  // namespace netdaq::detail::pcap_engine
