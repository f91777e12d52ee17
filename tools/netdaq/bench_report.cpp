#include "bench_report.h"

#include <algorithm>
#include <array>

#include "bench_check.h"
#include "report.h"

namespace netdaq::cli {

namespace {

// The run summed over queues and streams. Throughput is the receiver's (first to last packet
// of any queue, unique packets) unless tx only.
struct BenchTotals {
  uint64_t packets = 0, bytes = 0;  // the reported side's
  double seconds = 0, pps = 0, gbps = 0;
  uint64_t tx_packets = 0, tx_bytes = 0;
  double tx_seconds = 0;
  uint64_t expected = 0;  // what loss_ratio is of: sent, or rx only the expected count
  uint64_t lost = 0, dups = 0, reordered = 0, late = 0;
  double loss_ratio = 0;
  LatencyHistogram latency;
  std::array<uint64_t, kDropReasons> drops{};
};

double span_seconds(uint64_t first, uint64_t last) { return last > first ? double(last - first) / 1e9 : 0; }

double rx_seconds(const TrafficResult& r) {
  uint64_t first = 0, last = 0;
  for (auto& x : r.rx) {
    if (x.first_ns && (!first || x.first_ns < first)) first = x.first_ns;
    last = std::max(last, x.last_ns);
  }
  return span_seconds(first, last);
}

void add_tx(BenchTotals& t, const TrafficResult& r) {
  uint64_t first = 0, last = 0;
  for (auto& x : r.tx) {
    t.tx_packets += x.sent;
    t.tx_bytes += x.bytes;
    if (x.first_ns && (!first || x.first_ns < first)) first = x.first_ns;
    last = std::max(last, x.last_ns);
  }
  t.tx_seconds = span_seconds(first, last);
}

// Returns the unique packets received.
uint64_t add_streams(BenchTotals& t, const TrafficResult& r) {
  uint64_t unique = 0;
  for (auto& s : r.streams) {
    unique += s.unique;
    t.lost += s.lost;
    t.dups += s.duplicates;
    t.reordered += s.reordered;
    t.late += s.late;
    t.expected += s.expected;
    t.latency.merge(s.latency);
  }
  return unique;
}

BenchTotals bench_totals(const BenchOptions& o, const TrafficResult& r) {
  BenchTotals t;
  add_tx(t, r);
  const uint64_t unique = add_streams(t, r);
  t.seconds = o.has_rx() ? rx_seconds(r) : t.tx_seconds;
  t.packets = o.has_rx() ? unique : t.tx_packets;
  t.bytes = t.packets * o.size;
  t.pps = t.seconds > 0 ? double(t.packets) / t.seconds : 0;
  t.gbps = t.seconds > 0 ? double(t.bytes) * 8 / t.seconds / 1e9 : 0;
  if (o.has_tx()) t.expected = t.tx_packets;
  t.loss_ratio = t.expected ? double(t.lost) / double(t.expected) : 0;
  for (auto& s : r.stats)
    for (size_t i = 0; i < kDropReasons; ++i) t.drops[i] += s.drops[i];
  return t;
}

void print_result_line(std::FILE* out, const BenchOptions& o, const BenchTotals& t, const TrafficResult& r) {
  std::fprintf(out, "\n%s %u B: %s packets in %.3f s = %s, %.3f Gb/s goodput", o.protocol.c_str(), o.size,
               format_count(t.packets).c_str(), t.seconds, format_rate(t.pps).c_str(), t.gbps);
  if (o.has_rx())
    std::fprintf(out, "; lost %s (%.4f%%), duplicates %s, reordered %s, malformed %s", format_count(t.lost).c_str(),
                 t.loss_ratio * 100, format_count(t.dups).c_str(), format_count(t.reordered).c_str(),
                 format_count(r.total_malformed()).c_str());
  std::fprintf(out, "\n");
  std::fflush(out);
}

nlohmann::ordered_json accounting_json(const BenchOptions& o, const BenchAccounting& a) {
  if (!o.has_tx() || !o.has_rx())
    return {{"checked", false}, {"why", "one end only: the other end's counts are in another process"}};
  return {{"checked", true},
          {"holds", a.holds()},
          {"lost", a.lost},
          {"counted_drops", a.counted},
          {"kernel_drops_counted", a.kernel_drops_counted},
          {"batch_kernel_drops", a.batch_kernel},
          {"kernel_batch", a.batch}};
}

nlohmann::ordered_json bench_json(const BenchOptions& o, const BenchTotals& t, const TrafficResult& r,
                                  const BenchAccounting& a) {
  nlohmann::ordered_json j = {{"netdaq", version()},
                              {"command", "bench"},
                              {"protocol", o.protocol},
                              {"size", o.size},
                              {"queues", o.queues},
                              {"mode", o.mode},
                              {"batch", o.batch},
                              {"role", o.rx_only ? "rx" : (o.tx_only ? "tx" : "both")},
                              {"packets", t.packets},
                              {"bytes", t.bytes},
                              {"seconds", t.seconds},
                              {"pps", t.pps},
                              {"gbps", t.gbps},
                              {"sent", t.tx_packets},
                              {"expected", t.expected},
                              {"loss", t.lost},
                              {"loss_ratio", t.loss_ratio},
                              {"duplicates", t.dups},
                              {"reordered", t.reordered},
                              {"late", t.late},
                              {"malformed", r.total_malformed()}};
  QueueStats total;
  total.drops = t.drops;
  j["drops"] = drops_json(total);
  const double tx_sec = t.tx_seconds;
  j["tx"] = {{"packets", t.tx_packets},
             {"bytes", t.tx_bytes},
             {"seconds", tx_sec},
             {"pps", tx_sec > 0 ? double(t.tx_packets) / tx_sec : 0.0},
             {"gbps", tx_sec > 0 ? double(t.tx_bytes) * 8 / tx_sec / 1e9 : 0.0}};
  if (t.latency.n) j["latency_us"] = latency_json(t.latency);
  j["accounting"] = accounting_json(o, a);
  write_result_json(j["detail"], r);
  return j;
}

}  // namespace

void print_bench_headline(std::FILE* out, const BenchOptions& o, const TrafficOptions& t) {
  char span[64];
  if (o.count)
    std::snprintf(span, sizeof span, "%s packets", format_count(o.count).c_str());
  else if (t.duration_s > 0)
    std::snprintf(span, sizeof span, "%.1f s", t.duration_s);
  else
    std::snprintf(span, sizeof span, "until idle %.1f s", o.idle_timeout);
  std::fprintf(out, "netdaq bench: %s %u B, %u queue%s, %s mode, batch %u%s, %s\n", o.protocol.c_str(), o.size,
               o.queues, o.queues == 1 ? "" : "s", o.mode.c_str(), o.batch,
               o.rx_only ? ", rx only" : (o.tx_only ? ", tx only" : ""), span);
}

bool report_bench(std::FILE* out, const BenchOptions& o, const TrafficResult& r) {
  const BenchTotals t = bench_totals(o, r);
  const BenchAccounting a = bench_accounting(t.lost, r.stats, o.size);
  if (!o.quiet) print_summary(out, r);
  print_result_line(out, o, t, r);
  if (o.json) write_file("-", bench_json(o, t, r, a).dump(2) + "\n");
  if (!o.has_tx() || !o.has_rx()) return true;
  // Always on stderr, also with --quiet: the run's figures are above (or in the JSON).
  if (!a.holds()) {
    std::fprintf(stderr, "netdaq bench: FAILED: unexplained loss: %s; every packet sent and not received must be "
                 "counted under a drop reason (docs/concepts.md)\n", a.describe().c_str());
    return false;
  }
  // Loss is unique-based: a packet received twice, or one that is not the payload sent (a
  // corrupt or foreign datagram), leaves it unchanged, so they are checked on their own.
  if (t.dups || r.total_malformed()) {
    std::fprintf(stderr, "netdaq bench: FAILED: %s duplicate and %s malformed packets received; every packet sent "
                 "must arrive once and intact\n", format_count(t.dups).c_str(),
                 format_count(r.total_malformed()).c_str());
    return false;
  }
  return true;
}

}  // namespace netdaq::cli
