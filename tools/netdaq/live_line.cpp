// The periodic status line and the final summary of `netdaq run` / `netdaq bench`.
#include <cinttypes>
#include <cstring>

#include "report.h"

namespace netdaq::cli {

std::string format_rate(double pps) {
  char b[32];
  if (pps >= 1e6)
    std::snprintf(b, sizeof b, "%.2f Mpps", pps / 1e6);
  else if (pps >= 1e3)
    std::snprintf(b, sizeof b, "%.1f kpps", pps / 1e3);
  else
    std::snprintf(b, sizeof b, "%.0f pps", pps);
  return b;
}

std::string format_count(uint64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

void print_live(std::FILE* out, const LiveSample& s, bool has_rx, bool has_tx) {
  std::fprintf(out, "[%6.1fs]", s.t);
  if (has_rx)
    std::fprintf(out, " rx %10s %7.3f Gb/s | drops %s | out-of-order %s | lost %s", format_rate(s.rx_pps).c_str(),
                 s.rx_gbps, format_count(s.drops).c_str(), format_count(s.reordered).c_str(),
                 format_count(s.lost).c_str());
  if (has_rx && s.duplicates) std::fprintf(out, " | dup %s", format_count(s.duplicates).c_str());
  if (has_rx && s.malformed) std::fprintf(out, " | malformed %s", format_count(s.malformed).c_str());
  if (has_tx) {
    if (!has_rx) std::fprintf(out, " drops %s |", format_count(s.drops).c_str());
    std::fprintf(out, "%s tx %10s %7.3f Gb/s", has_rx ? " |" : "", format_rate(s.tx_pps).c_str(), s.tx_gbps);
  }
  std::fputc('\n', out);
  std::fflush(out);
}

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

double queue_seconds(const TrafficResult& r, const QueueStats& s) {
  for (auto& x : r.rx)
    if (s.is_rx && x.queue == s.queue) return x.seconds;
  for (auto& x : r.tx)
    if (!s.is_rx && x.queue == s.queue) return x.seconds;
  return 0;
}

std::string us(uint64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", double(ns) / 1e3);
  return b;
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
  size_t w = 5;
  for (auto& s : r.stats) w = std::max(w, s.queue.size());
  for (auto& s : r.streams) w = std::max(w, s.rx_queue.size());
  std::fprintf(out, "  %-*s %-3s %14s %16s %8s %11s %8s  %s\n", int(w), "queue", "dir", "packets", "bytes", "seconds",
               "rate", "Gb/s", "drops");
  for (auto& s : r.stats) {
    const double sec = queue_seconds(r, s);
    const double pps = sec > 0 ? double(s.packets) / sec : 0;
    const double gbps = sec > 0 ? double(s.bytes) * 8 / sec / 1e9 : 0;
    std::fprintf(out, "  %-*s %-3s %14s %16s %8.2f %11s %8.3f  %s\n", int(w), s.queue.c_str(), s.is_rx ? "rx" : "tx",
                 format_count(s.packets).c_str(), format_count(s.bytes).c_str(), sec, format_rate(pps).c_str(), gbps,
                 drops_text(s).c_str());
  }
  for (auto& x : r.rx)
    if (x.foreign)
      std::fprintf(out, "  %-*s     %s packets without a netdaq payload header (malformed)\n", int(w), x.queue.c_str(),
                   format_count(x.foreign).c_str());
  if (!r.streams.empty()) {
    std::fprintf(out, "  %-*s %6s %12s %12s %12s %10s %6s %9s %9s %5s  %s\n", int(w), "rx queue", "stream", "sent",
                 "received", "unique", "lost", "dup", "reordered", "malformed", "late", "latency us p50/p99/max");
    for (auto& s : r.streams) {
      std::string lat = s.latency.n ? us(s.latency.percentile(50)) + "/" + us(s.latency.percentile(99)) + "/" +
                                          us(s.latency.max)
                                    : "-";
      std::fprintf(out, "  %-*s %6u %12s %12s %12s %10s %6s %9s %9s %5s  %s\n", int(w), s.rx_queue.c_str(), s.stream,
                   s.expected_known ? format_count(s.expected).c_str() : "?", format_count(s.received).c_str(),
                   format_count(s.unique).c_str(), format_count(s.lost).c_str(), format_count(s.duplicates).c_str(),
                   format_count(s.reordered).c_str(), format_count(s.malformed).c_str(), format_count(s.late).c_str(),
                   lat.c_str());
    }
  }
  print_engine_details(out, r, int(w));
  std::fprintf(out, "  total: lost %s, drops %s, malformed %s\n", format_count(r.total_lost()).c_str(),
               format_count(r.total_drops()).c_str(), format_count(r.total_malformed()).c_str());
  std::fflush(out);
}

nlohmann::ordered_json drops_json(const QueueStats& s) {
  nlohmann::ordered_json d = nlohmann::ordered_json::object();
  for (size_t i = 0; i < kDropReasons; ++i) d[to_string(static_cast<DropReason>(i))] = s.drops[i];
  return d;
}

nlohmann::ordered_json latency_json(const LatencyHistogram& l) {
  return {{"min", double(l.min) / 1e3},
          {"p50", double(l.percentile(50)) / 1e3},
          {"p99", double(l.percentile(99)) / 1e3},
          {"max", double(l.max) / 1e3},
          {"mean", double(l.sum) / double(l.n) / 1e3}};
}

void write_result_json(nlohmann::ordered_json& j, const TrafficResult& r) {
  j["seconds"] = r.elapsed_s;
  j["interrupted"] = r.interrupted;
  auto& queues = j["queues"] = nlohmann::ordered_json::array();
  for (auto& s : r.stats) {
    const double sec = queue_seconds(r, s);
    nlohmann::ordered_json q = {{"name", s.queue},
                                {"interface", s.interface},
                                {"direction", s.is_rx ? "rx" : "tx"},
                                {"packets", s.packets},
                                {"bytes", s.bytes},
                                {"seconds", sec},
                                {"pps", sec > 0 ? double(s.packets) / sec : 0.0},
                                {"gbps", sec > 0 ? double(s.bytes) * 8 / sec / 1e9 : 0.0},
                                {"bursts", s.bursts},
                                {"copies", s.copies},
                                {"errors", s.errors},
                                {"connections", s.connections},
                                {"drops", drops_json(s)}};
    if (!s.mode.empty()) q["mode"] = s.mode;
    if (!s.engine_counters.empty()) {
      auto& e = q["engine"] = nlohmann::ordered_json::object();
      for (auto& [name, value] : s.engine_counters) e[name] = value;
    }
    for (auto& x : r.rx)
      if (s.is_rx && x.queue == s.queue) q["foreign"] = x.foreign;
    queues.push_back(std::move(q));
  }
  if (!r.flows.empty()) {
    auto& flows = j["flows"] = nlohmann::ordered_json::array();
    for (auto& f : r.flows) {
      nlohmann::ordered_json o = {{"interface", f.interface}};
      if (f.unmatched) o["unmatched"] = true;
      else o["flow"] = f.flow, o["queue"] = f.queue, o["wrong_queue"] = f.wrong_queue;
      o["packets"] = f.packets;
      o["bytes"] = f.bytes;
      flows.push_back(std::move(o));
    }
  }
  auto& streams = j["streams"] = nlohmann::ordered_json::array();
  for (auto& s : r.streams) {
    nlohmann::ordered_json st = {{"rx_queue", s.rx_queue}, {"stream", s.stream}};
    if (s.expected_known) st["sent"] = s.expected;
    st["received"] = s.received;
    st["unique"] = s.unique;
    st["lost"] = s.lost;
    st["duplicates"] = s.duplicates;
    st["reordered"] = s.reordered;
    st["malformed"] = s.malformed;
    st["late"] = s.late;
    if (s.latency.n) st["latency_us"] = latency_json(s.latency);
    streams.push_back(std::move(st));
  }
  uint64_t rx = 0, tx = 0, dups = 0, reord = 0;
  for (auto& s : r.stats) (s.is_rx ? rx : tx) += s.packets;
  for (auto& s : r.streams) dups += s.duplicates, reord += s.reordered;
  j["totals"] = {{"rx_packets", rx},   {"tx_packets", tx},      {"lost", r.total_lost()},
                 {"drops", r.total_drops()}, {"duplicates", dups}, {"reordered", reord},
                 {"malformed", r.total_malformed()}};
}

bool write_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace netdaq::cli
