// The final summary tables of `netdaq run` / `netdaq bench`: per queue, per stream, the
// engines' own counters and flows, and the totals.
#include <algorithm>

#include "report.h"

namespace netdaq::cli {

namespace {

std::string drops_text(const QueueStats& s) {
  std::string t;
  for (size_t i = 0; i < kDropReasons; ++i) {
    if (!s.drops[i]) continue;
    if (!t.empty()) t += ' ';
    t += to_string(static_cast<DropReason>(i));
    t += '=';
    t += format_count(s.drops[i]);
    if (static_cast<DropReason>(i) == DropReason::tx_full) t += "(retried)";
  }
  if (s.errors) t += (t.empty() ? "" : " ") + std::string("errors=") + format_count(s.errors);
  return t.empty() ? "-" : t;
}

std::string us(uint64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", double(ns) / 1e3);
  return b;
}

void print_queues(std::FILE* out, const TrafficResult& r, int w) {
  std::fprintf(out, "  %-*s %-3s %14s %16s %8s %11s %8s  %s\n", w, "queue", "dir", "packets", "bytes", "seconds",
               "rate", "Gb/s", "drops");
  for (auto& s : r.stats) {
    const double sec = r.seconds_of(s);
    const double pps = sec > 0 ? double(s.packets) / sec : 0;
    const double gbps = sec > 0 ? double(s.bytes) * 8 / sec / 1e9 : 0;
    std::fprintf(out, "  %-*s %-3s %14s %16s %8.2f %11s %8.3f  %s\n", w, s.queue.c_str(), s.is_rx ? "rx" : "tx",
                 format_count(s.packets).c_str(), format_count(s.bytes).c_str(), sec, format_rate(pps).c_str(), gbps,
                 drops_text(s).c_str());
  }
  for (auto& x : r.rx)
    if (x.foreign)
      std::fprintf(out, "  %-*s     %s packets without a netdaq payload header (malformed)\n", w, x.queue.c_str(),
                   format_count(x.foreign).c_str());
}

void print_streams(std::FILE* out, const TrafficResult& r, int w) {
  if (r.streams.empty()) return;
  std::fprintf(out, "  %-*s %6s %12s %12s %12s %10s %6s %9s %9s %5s  %s\n", w, "rx queue", "stream", "sent",
               "received", "unique", "lost", "dup", "reordered", "malformed", "late", "latency us p50/p99/max");
  for (auto& s : r.streams) {
    std::string lat = s.latency.n ? us(s.latency.percentile(50)) + "/" + us(s.latency.percentile(99)) + "/" +
                                        us(s.latency.max)
                                  : "-";
    std::fprintf(out, "  %-*s %6u %12s %12s %12s %10s %6s %9s %9s %5s  %s\n", w, s.rx_queue.c_str(), s.stream,
                 s.expected_known ? format_count(s.expected).c_str() : "?", format_count(s.received).c_str(),
                 format_count(s.unique).c_str(), format_count(s.lost).c_str(), format_count(s.duplicates).c_str(),
                 format_count(s.reordered).c_str(), format_count(s.malformed).c_str(), format_count(s.late).c_str(),
                 lat.c_str());
  }
}

// How each queue ran (engine mode), its nonzero raw engine counters, and the flow counters.
void print_engine_details(std::FILE* out, const TrafficResult& r, int w) {
  for (auto& s : r.stats) {
    if (s.mode.empty()) continue;
    std::string counters;
    for (auto& [name, value] : s.engine_counters)
      if (value) counters += " " + name + "=" + format_count(value);
    std::fprintf(out, "  %-*s %s: %s%s\n", w, s.queue.c_str(), s.is_rx ? "rx" : "tx", s.mode.c_str(),
                 counters.empty() ? "" : ("," + counters).c_str());
  }
  if (r.flows.empty()) return;
  std::fprintf(out, "  %-12s %-10s %5s %14s %16s %12s\n", "interface", "flow", "queue", "packets", "bytes",
               "wrong_queue");
  for (auto& f : r.flows)
    std::fprintf(out, "  %-12s %-10s %5s %14s %16s %12s\n", f.interface.c_str(),
                 f.unmatched ? "(kernel)" : std::to_string(f.flow).c_str(),
                 f.unmatched ? "-" : std::to_string(f.queue).c_str(), format_count(f.packets).c_str(),
                 format_count(f.bytes).c_str(), f.unmatched ? "-" : format_count(f.wrong_queue).c_str());
}

}  // namespace

void print_summary(std::FILE* out, const TrafficResult& r) {
  std::fprintf(out, "\nsummary (%.2f s%s)\n", r.elapsed_s, r.interrupted ? ", interrupted" : "");
  size_t w = 5;  // the queue column fits every queue name
  for (auto& s : r.stats) w = std::max(w, s.queue.size());
  for (auto& s : r.streams) w = std::max(w, s.rx_queue.size());
  print_queues(out, r, int(w));
  print_streams(out, r, int(w));
  print_engine_details(out, r, int(w));
  std::fprintf(out, "  total: lost %s, drops %s, malformed %s\n", format_count(r.total_lost()).c_str(),
               format_count(r.total_drops()).c_str(), format_count(r.total_malformed()).c_str());
  std::fflush(out);
}

}  // namespace netdaq::cli
