#include "capture_plan.h"

#include "engine_traits.h"
#include "errors.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

// Why the config's rx queues cannot give whole frames, or "" when they can.
std::string frames_problem(const Config& cfg) {
  size_t queues = 0;
  for (const auto& i : cfg.interfaces) {
    if (i.rx.queues.empty()) continue;
    if (!delivers_whole_frames(i))
      return "interface '" + i.name + "' uses engine '" + i.engine +
             "', which delivers payloads only (no Ethernet headers); capture needs engine afxdp or dpdk";
    for (const auto& q : i.rx.queues) {
      if (q.memory_regions.size() > 1)
        return "interface '" + i.name + "' rx queue " + std::to_string(q.id) +
               " splits headers from payloads (two memory_regions); capture needs whole frames: give it one region";
      ++queues;
    }
  }
  return queues ? "" : "the config has no rx queues";
}

}  // namespace

bool plan_capture(const CaptureOptions& o, CapturePlan& p) {
  p.out = o.output == "-" ? stderr : stdout;  // pcap on stdout: text to stderr
  Config cfg;
  if (!setup_step([&] { cfg = Config::load(o.config); }, "netdaq capture: " + o.config + ": ")) return false;
  if (const std::string why = frames_problem(cfg); !why.empty()) {
    std::fprintf(stderr, "netdaq capture: %s: %s\n", o.config.c_str(), why.c_str());
    return false;
  }
  std::string err;
  if (!p.pcap.open(o.output, &err)) {
    std::fprintf(stderr, "netdaq capture: %s\n", err.c_str());
    return false;
  }
  install_stop_signals();
  if (!setup_step([&] { p.session = std::make_unique<Session>(std::move(cfg)); }, "netdaq capture: ")) return false;
  p.queues = p.session->rx_queues();
  return true;
}

}  // namespace netdaq::cli
