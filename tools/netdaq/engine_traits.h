// What the CLI asks about an interface's engine: capabilities (netdaq/engine_info.h), never
// engine names.
#pragma once

#include "netdaq/engine_info.h"
#include "netdaq/netdaq.h"

namespace netdaq::cli {

// Its rx packets carry their whole Ethernet frame (Packet::frame()): capture can write them.
inline bool delivers_whole_frames(const InterfaceConfig& iface) {
  const auto caps = capabilities_of(iface);
  return caps && caps->whole_frames;
}

// Its rx packets are raw frames of any protocol, not netdaq payloads: receivers only count them.
inline bool counts_only(const InterfaceConfig& iface) {
  const auto caps = capabilities_of(iface);
  return caps && caps->raw_frames;
}

}  // namespace netdaq::cli
