#include "capture_report.h"

#include <cstdio>

#include "cli.h"
#include "format.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

void print_queue_stats(std::FILE* out, const Session& s) {
  std::fprintf(out, "  %-20s %14s  drops\n", "rx queue", "packets");
  for (const QueueStats& q : s.stats()) {
    if (!q.is_rx) continue;
    std::string drops;
    for (size_t r = 0; r < kDropReasons; ++r)
      if (q.drops[r]) drops += std::string(drops.empty() ? "" : " ") + to_string(static_cast<DropReason>(r)) + "=" +
                               format_count(q.drops[r]);
    if (q.errors) drops += (drops.empty() ? "" : " ") + std::string("errors=") + format_count(q.errors);
    std::fprintf(out, "  %-20s %14s  %s\n", q.queue.c_str(), format_count(q.packets).c_str(),
                 drops.empty() ? "-" : drops.c_str());
  }
  // Packets no configured flow matched went to the kernel, not to a queue: not captured.
  for (const FlowStats& f : s.flow_stats())
    if (f.unmatched && f.packets)
      std::fprintf(out, "  %s: %s packets matched no flow (passed to the kernel, not captured)\n", f.interface.c_str(),
                   format_count(f.packets).c_str());
}

}  // namespace

void print_capture_headline(const CaptureOptions& o, const CapturePlan& p) {
  std::FILE* out = p.out;
  std::fprintf(out, "netdaq capture: %s: %zu rx queue%s -> %s, ", o.config.c_str(), p.queues.size(),
               p.queues.size() == 1 ? "" : "s", o.output.c_str());
  if (o.count) std::fprintf(out, "%s packets%s", format_count(o.count).c_str(), o.duration > 0 ? " or " : "");
  if (o.duration > 0) std::fprintf(out, "%.1f s", o.duration);
  if (!o.count && o.duration <= 0) std::fprintf(out, "until Ctrl-C");
  std::fprintf(out, " (Ctrl-C stops and prints the summary)\n");
  std::fflush(out);
}

int report_capture(const CaptureOptions& o, const CapturePlan& p, const CaptureResult& r, bool closed,
                   const std::string& close_error) {
  std::FILE* out = p.out;
  std::fprintf(out, "netdaq capture: wrote %s packets (%s bytes) to %s in %.2f s%s\n", format_count(r.written).c_str(),
               format_count(r.bytes).c_str(), o.output.c_str(), r.seconds, stop_requested() ? " (interrupted)" : "");
  print_queue_stats(out, *p.session);
  std::fflush(out);
  if (!r.refused.empty()) std::fprintf(stderr, "netdaq capture: %s\n", r.refused.c_str());
  if (!closed) std::fprintf(stderr, "netdaq capture: %s: %s\n", o.output.c_str(), close_error.c_str());
  return r.refused.empty() && closed ? kExitOk : kExitError;
}

}  // namespace netdaq::cli
