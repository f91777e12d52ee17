// The JSON form of a TrafficResult (`netdaq run --json`, the "detail" of `netdaq bench --json`).
#include "report.h"

namespace netdaq::cli {

namespace {

using Json = nlohmann::ordered_json;

Json queue_json(const TrafficResult& r, const QueueStats& s) {
  const double sec = r.seconds_of(s);
  Json q = {{"name", s.queue},
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
    auto& e = q["engine"] = Json::object();
    for (auto& [name, value] : s.engine_counters) e[name] = value;
  }
  for (auto& x : r.rx)
    if (s.is_rx && x.queue == s.queue) q["foreign"] = x.foreign;
  return q;
}

Json flow_json(const FlowStats& f) {
  Json o = {{"interface", f.interface}};
  if (f.unmatched) o["unmatched"] = true;
  else o["flow"] = f.flow, o["queue"] = f.queue, o["wrong_queue"] = f.wrong_queue;
  o["packets"] = f.packets;
  o["bytes"] = f.bytes;
  return o;
}

Json stream_json(const StreamResult& s) {
  Json st = {{"rx_queue", s.rx_queue}, {"stream", s.stream}};
  if (s.expected_known) st["sent"] = s.expected;
  st["received"] = s.received;
  st["unique"] = s.unique;
  st["lost"] = s.lost;
  st["duplicates"] = s.duplicates;
  st["reordered"] = s.reordered;
  st["malformed"] = s.malformed;
  st["late"] = s.late;
  if (s.latency.n) st["latency_us"] = latency_json(s.latency);
  return st;
}

Json totals_json(const TrafficResult& r) {
  uint64_t rx = 0, tx = 0, dups = 0, reord = 0;
  for (auto& s : r.stats) (s.is_rx ? rx : tx) += s.packets;
  for (auto& s : r.streams) dups += s.duplicates, reord += s.reordered;
  return {{"rx_packets", rx},          {"tx_packets", tx},   {"lost", r.total_lost()},
          {"drops", r.total_drops()}, {"duplicates", dups}, {"reordered", reord},
          {"malformed", r.total_malformed()}};
}

}  // namespace

Json drops_json(const QueueStats& s) {
  Json d = Json::object();
  for (size_t i = 0; i < kDropReasons; ++i) d[to_string(static_cast<DropReason>(i))] = s.drops[i];
  return d;
}

Json latency_json(const LatencyHistogram& l) {
  return {{"min", double(l.min) / 1e3},
          {"p50", double(l.percentile(50)) / 1e3},
          {"p99", double(l.percentile(99)) / 1e3},
          {"max", double(l.max) / 1e3},
          {"mean", double(l.sum) / double(l.n) / 1e3}};
}

void write_result_json(Json& j, const TrafficResult& r) {
  j["seconds"] = r.elapsed_s;
  j["interrupted"] = r.interrupted;
  auto& queues = j["queues"] = Json::array();
  for (auto& s : r.stats) queues.push_back(queue_json(r, s));
  if (!r.flows.empty()) {
    auto& flows = j["flows"] = Json::array();
    for (auto& f : r.flows) flows.push_back(flow_json(f));
  }
  auto& streams = j["streams"] = Json::array();
  for (auto& s : r.streams) streams.push_back(stream_json(s));
  j["totals"] = totals_json(r);
}

}  // namespace netdaq::cli
