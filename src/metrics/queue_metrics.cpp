// Per-queue families. RX and TX are families of their own (netdaq_rx_*, netdaq_tx_*), so that
// a sum over a family's series means something (packets received, not received + sent).
#include <string>

#include "metrics/families.h"

namespace netdaq::metrics {

namespace {

struct CounterField {
  const char* suffix;  // after "netdaq_rx_" / "netdaq_tx_"
  const char* help_rx;
  const char* help_tx;
  uint64_t QueueStats::*field;
};

constexpr CounterField kCounters[] = {
    {"packets_total", "Packets delivered to the application.", "Packets the engine accepted for sending.",
     &QueueStats::packets},
    {"bytes_total", "Payload bytes of the packets delivered to the application.",
     "Payload bytes of the packets the engine accepted.", &QueueStats::bytes},
    {"bursts_total", "Bursts delivered to the application.", "Bursts sent.", &QueueStats::bursts},
    {"copied_bytes_total", "Bytes copied on the data path (socket engine, staging).",
     "Bytes copied on the data path (socket engine, staging).", &QueueStats::copies},
    {"errors_total", "OS errors seen (each also logged, rate-limited).",
     "OS errors seen (each also logged, rate-limited).", &QueueStats::errors},
    {"connections_total", "TCP connections accepted.", "TCP connections established.", &QueueStats::connections},
};

bool has_direction(std::span<const QueueStats> qs, bool rx) {
  for (const auto& q : qs)
    if (q.is_rx == rx) return true;
  return false;
}

void write_direction(TextWriter& w, std::span<const QueueStats> qs, bool rx) {
  const std::string prefix = rx ? "netdaq_rx_" : "netdaq_tx_";
  for (const auto& c : kCounters) {
    w.family(prefix + c.suffix, rx ? c.help_rx : c.help_tx, MetricType::counter);
    for (const auto& q : qs)
      if (q.is_rx == rx) w.sample({{"interface", q.interface}, {"queue", q.queue}}, q.*c.field);
  }
  w.family(prefix + "drops_total",
           rx ? "Packets that did not reach the application, by drop reason (each counted under one reason)."
              : "Packets that were not sent, by drop reason (tx_full: refused for now, the sender may retry).",
           MetricType::counter);
  for (const auto& q : qs) {
    if (q.is_rx != rx) continue;
    for (size_t i = 0; i < kDropReasons; ++i)
      w.sample({{"interface", q.interface}, {"queue", q.queue}, {"reason", to_string(static_cast<DropReason>(i))}},
               q.drops[i]);
  }
  w.family(prefix + "pool_buffers_in_use", "Buffers of the queue's pool held now.", MetricType::gauge);
  for (const auto& q : qs)
    if (q.is_rx == rx) w.sample({{"interface", q.interface}, {"queue", q.queue}}, q.pool_in_use);
  bool any_engine = false;
  for (const auto& q : qs) any_engine = any_engine || (q.is_rx == rx && !q.engine_counters.empty());
  if (!any_engine) return;
  w.family(prefix + "engine_events_total",
           "Raw engine counters behind the drop reasons (e.g. AF_XDP rx_ring_full), by counter name.",
           MetricType::counter);
  for (const auto& q : qs) {
    if (q.is_rx != rx) continue;
    for (const auto& [name, value] : q.engine_counters)
      w.sample({{"interface", q.interface}, {"queue", q.queue}, {"counter", name}}, value);
  }
}

}  // namespace

void write_queue_metrics(TextWriter& w, std::span<const QueueStats> queues) {
  for (bool rx : {true, false})
    if (has_direction(queues, rx)) write_direction(w, queues, rx);
  if (queues.empty()) return;
  w.family("netdaq_queue_info", "Each queue, with its direction and how its engine runs it (value 1).",
           MetricType::gauge);
  for (const auto& q : queues)
    w.sample({{"interface", q.interface}, {"queue", q.queue}, {"direction", q.is_rx ? "rx" : "tx"}, {"mode", q.mode}},
             uint64_t{1});
}

}  // namespace netdaq::metrics
