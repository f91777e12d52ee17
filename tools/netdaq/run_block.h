// The `run:` block of a netdaq config file: what `netdaq run` does with the configured queues.
// The CLI's own block (netdaq/app_block.h): the library reads it and otherwise ignores it.
#pragma once

#include <cstdint>

#include "netdaq/config.h"

namespace netdaq::cli {

struct RunBlock {
  static constexpr const char* kKey = "run";
  double duration_s = 5;            // 0 = until Ctrl-C
  uint64_t tx_packets = 0;          // packets each tx queue sends (0 = for duration_s)
  uint32_t tx_payload_size = 1472;  // bytes per datagram / message (netdaq payload format)
  uint32_t stats_interval_ms = 1000;
  uint32_t drain_ms = 200;  // keep receiving after senders stop
};

// Declares `run:` to the config loader (once; later calls do nothing). Before any Config::load.
void register_run_block();

inline RunBlock& run_block(Config& cfg) { return cfg.options.get<RunBlock>(); }
inline const RunBlock& run_block(const Config& cfg) { return cfg.options.get<RunBlock>(); }

}  // namespace netdaq::cli
