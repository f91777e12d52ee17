// Families of frames between nodes (docs/fleet.md): a FrameSink's per-destination fates and an
// EventBuilder's frames, per-node fragments and refusals. A fleet's totals are the sums of
// these over its processes (deploy/prometheus/fleet-rules.yml).
#include <string>

#include "metrics/families.h"

namespace netdaq::metrics {

namespace {

using fleet::BuilderNodeStats;
using fleet::SinkDestinationStats;

struct SinkField {
  const char* name;
  const char* help;
  uint64_t SinkDestinationStats::*field;
};

constexpr SinkField kSinkCounters[] = {
    {"netdaq_fleet_sink_fragments_total", "Fragments routed to the destination.", &SinkDestinationStats::fragments},
    {"netdaq_fleet_sink_acked_total", "Fragments the destination placed and released (their credit came back).",
     &SinkDestinationStats::acked},
    {"netdaq_fleet_sink_acked_bytes_total", "Bytes of the acked fragments.", &SinkDestinationStats::bytes_acked},
    {"netdaq_fleet_sink_refused_total", "Fragments the destination refused (no buffer, late, too big).",
     &SinkDestinationStats::refused},
    {"netdaq_fleet_sink_no_credit_total", "Fragments dropped: no credit left for the destination.",
     &SinkDestinationStats::no_credit},
    {"netdaq_fleet_sink_peer_down_total", "Fragments lost: the destination was not connected.",
     &SinkDestinationStats::peer_down},
    {"netdaq_fleet_sink_in_flight_lost_total", "Fragments lost: the connection failed before their credit came back.",
     &SinkDestinationStats::in_flight_lost},
    {"netdaq_fleet_sink_connects_total", "Connections made to the destination.", &SinkDestinationStats::connects},
    {"netdaq_fleet_sink_disconnects_total", "Connections to the destination that failed or closed.",
     &SinkDestinationStats::disconnects},
};

struct NodeField {
  const char* name;
  const char* help;
  uint64_t BuilderNodeStats::*field;
};

constexpr NodeField kNodeCounters[] = {
    {"netdaq_fleet_builder_fragments_total", "Fragments of the node placed into built frames.",
     &BuilderNodeStats::fragments},
    {"netdaq_fleet_builder_fragment_bytes_total", "Bytes of those fragments.", &BuilderNodeStats::bytes},
    {"netdaq_fleet_builder_incomplete_fragments_total", "Placed fragments that were incomplete at their ingest.",
     &BuilderNodeStats::incomplete},
    {"netdaq_fleet_builder_missing_total", "Frames handed out without the node's fragment (each counted once).",
     &BuilderNodeStats::missing},
    {"netdaq_fleet_builder_late_total", "Fragments that came after their frame was handed out.",
     &BuilderNodeStats::late},
    {"netdaq_fleet_builder_duplicate_total", "Fragments of a node that came twice for one frame.",
     &BuilderNodeStats::duplicate},
};

void write_sinks(TextWriter& w, std::span<const fleet::SinkStats> sinks) {
  w.family("netdaq_fleet_sink_frames_total", "Frames given to the sink.", MetricType::counter);
  for (const auto& s : sinks) w.sample({}, s.frames);
  for (const auto& c : kSinkCounters) {
    w.family(c.name, c.help, MetricType::counter);
    for (const auto& s : sinks)
      for (const auto& d : s.destinations) w.sample({{"destination", d.address}}, d.*c.field);
  }
  w.family("netdaq_fleet_sink_in_flight", "Fragments sent whose fate is not known yet.", MetricType::gauge);
  for (const auto& s : sinks)
    for (const auto& d : s.destinations) w.sample({{"destination", d.address}}, d.in_flight);
  w.family("netdaq_fleet_sink_connected", "1 while the destination is connected.", MetricType::gauge);
  for (const auto& s : sinks)
    for (const auto& d : s.destinations) w.sample({{"destination", d.address}}, uint64_t{d.connected});
}

void write_builders(TextWriter& w, std::span<const fleet::BuilderStats> builders) {
  w.family("netdaq_fleet_builder_frames_total", "Built frames handed out, complete or not.", MetricType::counter);
  for (const auto& b : builders) {
    w.sample({{"state", "complete"}}, b.frames_complete);
    w.sample({{"state", "incomplete"}}, b.frames_incomplete);
  }
  w.family("netdaq_fleet_builder_timed_out_total", "Built frames handed out by the timeout with fragments missing.",
           MetricType::counter);
  for (const auto& b : builders) w.sample({}, b.frames_timed_out);
  for (const auto& c : kNodeCounters) {
    w.family(c.name, c.help, MetricType::counter);
    for (const auto& b : builders)
      for (const auto& n : b.nodes) w.sample({{"node", std::to_string(n.node)}}, n.*c.field);
  }
  w.family("netdaq_fleet_receiver_fragments_total", "Fragments that arrived (placed or refused).",
           MetricType::counter);
  for (const auto& b : builders) w.sample({}, b.receiver.fragments);
  w.family("netdaq_fleet_receiver_refused_total", "Fragments refused by the receiving side, by reason.",
           MetricType::counter);
  for (const auto& b : builders) {
    const auto& r = b.receiver;
    w.sample({{"reason", "no_buffer"}}, r.no_buffer);
    w.sample({{"reason", "too_big"}}, r.too_big);
    w.sample({{"reason", "malformed"}}, r.malformed);
    w.sample({{"reason", "late"}}, r.late);
    w.sample({{"reason", "duplicate"}}, r.duplicate);
    w.sample({{"reason", "receive_failed"}}, r.receive_failed);
  }
  w.family("netdaq_fleet_receiver_senders", "Senders connected now.", MetricType::gauge);
  for (const auto& b : builders) w.sample({}, b.receiver.senders);
  w.family("netdaq_fleet_receiver_connections_total", "Senders accepted so far.", MetricType::counter);
  for (const auto& b : builders) w.sample({}, b.receiver.connections);
}

}  // namespace

void write_fleet_metrics(TextWriter& w, std::span<const fleet::SinkStats> sinks,
                         std::span<const fleet::BuilderStats> builders) {
  if (!sinks.empty()) write_sinks(w, sinks);
  if (!builders.empty()) write_builders(w, builders);
}

}  // namespace netdaq::metrics
