#include "run_block.h"

#include <string>

#include "netdaq/app_block.h"

namespace netdaq::cli {

namespace {

// Each payload must fit one buffer of every tx queue's payload region (its last region). Only
// a size written in the file (or set by the program) is checked: the default must not make a
// config with small buffers invalid; `netdaq run` checks it against the buffers when it starts.
void check_payload_fits(const Config& cfg, std::vector<ConfigIssue>& issues) {
  const RunBlock& run = run_block(cfg);
  const bool chosen = run.tx_payload_size != RunBlock{}.tx_payload_size || cfg.locations.count("run.tx_payload_size");
  if (!chosen) return;
  const MemoryRegionConfig* smallest = nullptr;
  std::string user;
  for (const auto& iface : cfg.interfaces)
    for (const auto& q : iface.tx.queues) {
      const MemoryRegionConfig* region = q.memory_regions.empty() ? nullptr : cfg.find_region(q.memory_regions.back());
      if (region && (!smallest || region->buf_size < smallest->buf_size)) {
        smallest = region;
        user = q.name.empty() ? iface.name + "/tx" + std::to_string(q.id) : q.name;  // as the Session names it
      }
    }
  if (smallest && run.tx_payload_size > smallest->buf_size)
    issues.push_back({cfg.location_of("run.tx_payload_size"), "run.tx_payload_size", std::to_string(run.tx_payload_size),
                      "must be <= " + std::to_string(smallest->buf_size) + ", the buf_size of region '" +
                          smallest->name + "' used by tx queue " + user});
}

}  // namespace

void register_run_block() {
  static const bool registered = [] {
    register_app_block(app_block<RunBlock>(
        {
            app_option("duration_s", &RunBlock::duration_s, "seconds to send", 0, 0, "0 = until Ctrl-C"),
            app_option("tx_packets", &RunBlock::tx_packets, "packets each tx queue sends (0: for duration_s)"),
            app_option("tx_payload_size", &RunBlock::tx_payload_size, "bytes per datagram or message", 24, 65507),
            app_option("stats_interval_ms", &RunBlock::stats_interval_ms, "live statistics period", 10),
            app_option("drain_ms", &RunBlock::drain_ms, "keep receiving after the senders stop"),
        },
        check_payload_fits));
    return true;
  }();
  (void)registered;
}

}  // namespace netdaq::cli
