// The `fleet:` block of a netdaq config file: how `netdaq ingest` sends its frames to builders
// and how `netdaq build` receives them (docs/fleet.md). A file with a fleet block may have no
// interfaces (a builder's). The strings are turned into the typed configs of netdaq/fleet.h
// by sink_config() / builder_config(), which the block's check runs too, so a wrong value is
// reported with its file and line when the file is loaded.
#pragma once

#include <cstdint>
#include <string>

#include "netdaq/config.h"
#include "netdaq/fleet.h"

namespace netdaq::cli {

struct FleetBlock {
  static constexpr const char* kKey = "fleet";
  // Both sides.
  uint32_t nodes = 1;                  // ingest nodes whose fragments make one built frame
  std::string transport = "auto";      // auto | tcp | shm
  std::string devices;                 // UCX_NET_DEVICES; "": found from the addresses
  // An ingest node (netdaq ingest).
  uint32_t node = 0;
  std::string destinations;            // "HOST:PORT,HOST:PORT": builder i is item i
  std::string route = "frame";         // frame | stream | bytes
  uint32_t credits = 8;
  std::string when_full = "drop";      // drop | wait
  uint32_t wait_ms = 1000;
  uint32_t reconnect_ms = 200;
  // A builder (netdaq build).
  std::string listen = "0.0.0.0:13337";
  uint32_t buffers = 32;
  uint64_t max_bytes = 4 << 20;
  uint32_t timeout_ms = 500;
};

// Declares `fleet:` to the config loader (once). Before any Config::load.
void register_fleet_block();

inline const FleetBlock& fleet_block(const Config& cfg) { return cfg.options.get<FleetBlock>(); }

// The typed configs. Throw std::invalid_argument naming the key and what is allowed.
fleet::SinkConfig sink_config(const FleetBlock& b);
fleet::BuilderConfig builder_config(const FleetBlock& b);

}  // namespace netdaq::cli
