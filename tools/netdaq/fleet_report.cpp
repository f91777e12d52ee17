#include "fleet_report.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace netdaq::cli {

namespace {

using nlohmann::json;

bool adds_up(const fleet::SinkDestinationStats& d) {
  return d.fragments == d.acked + d.refused + d.no_credit + d.peer_down + d.in_flight_lost + d.in_flight;
}

json destination_json(const fleet::SinkDestinationStats& d) {
  return {{"address", d.address},      {"connected", d.connected},   {"fragments", d.fragments},
          {"acked", d.acked},          {"bytes_acked", d.bytes_acked}, {"refused", d.refused},
          {"no_credit", d.no_credit},  {"peer_down", d.peer_down},   {"in_flight_lost", d.in_flight_lost},
          {"in_flight", d.in_flight},  {"connects", d.connects},     {"disconnects", d.disconnects},
          {"acked_connection", d.acked_connection},
          {"adds_up", adds_up(d)}};
}

json receiver_json(const fleet::ReceiverStats& r) {
  return {{"connections", r.connections}, {"senders", r.senders},     {"disconnects", r.disconnects},
          {"fragments", r.fragments},     {"placed", r.placed},       {"bytes", r.bytes},
          {"no_buffer", r.no_buffer},     {"too_big", r.too_big},     {"malformed", r.malformed},
          {"late", r.late},               {"duplicate", r.duplicate}, {"receive_failed", r.receive_failed}};
}

bool write_json(const json& doc, const std::string& path) {
  if (path.empty()) return true;
  const std::string text = doc.dump(1) + "\n";
  if (path == "-") {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return true;
  }
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  const bool ok = f && std::fputs(text.c_str(), f) >= 0;
  if (f && std::fclose(f) != 0) f = nullptr;
  if (!ok || !f || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

void print_destination(const fleet::SinkDestinationStats& d) {
  std::fprintf(stderr,
               "  %-22s %s fragments %llu: acked %llu (%llu bytes), refused %llu, no_credit %llu, peer_down %llu, "
               "in_flight_lost %llu, in_flight %llu; connects %llu, disconnects %llu\n",
               d.address.c_str(), d.connected ? "up  " : "down", (unsigned long long)d.fragments,
               (unsigned long long)d.acked, (unsigned long long)d.bytes_acked, (unsigned long long)d.refused,
               (unsigned long long)d.no_credit, (unsigned long long)d.peer_down,
               (unsigned long long)d.in_flight_lost, (unsigned long long)d.in_flight,
               (unsigned long long)d.connects, (unsigned long long)d.disconnects);
}

}  // namespace

bool sink_invariant_holds(const fleet::SinkStats& s) {
  if (!adds_up(s.total)) return false;
  for (const auto& d : s.destinations)
    if (!adds_up(d)) return false;
  return true;
}

bool print_ingest_result(const IngestResult& r, const std::string& json_path) {
  uint64_t packets = 0, dropped = 0;
  for (const auto& q : r.queues)
    if (q.is_rx) {
      packets += q.packets;
      dropped += q.total_drops();
    }
  const HostFrameStats& f = r.frame_stats;
  {
    json dests = json::array();
    for (const auto& d : r.sink.destinations) dests.push_back(destination_json(d));
    json doc{
        {"seconds", r.seconds},
        {"packets", {{"received", packets}, {"dropped", dropped}}},
        {"frames",
         {{"sent", r.frames},
          {"complete", r.frames_complete},
          {"incomplete", r.frames_incomplete},
          {"assembler",
           {{"packets", f.packets}, {"placed", f.placed}, {"duplicate", f.duplicate}, {"late", f.late},
            {"no_buffer", f.no_buffer}, {"malformed", f.malformed}, {"no_stream", f.no_stream},
            {"frames_dropped", f.frames_dropped}, {"bytes_missing", f.bytes_missing}}}}},
        {"sink", {{"frames", r.sink.frames}, {"total", destination_json(r.sink.total)}, {"destinations", dests}}},
        {"drained", r.drained},
        {"adds_up", sink_invariant_holds(r.sink)}};
    if (r.gpu.on)
      doc["frames"]["gpu_staging"] = {{"buffers", r.gpu.buffers},           {"buffer_bytes", r.gpu.buffer_bytes},
                                      {"frames_staged", r.gpu.frames_staged}, {"bytes_staged", r.gpu.bytes_staged},
                                      {"dropped_no_staging", r.gpu.dropped_no_staging},
                                      {"too_big", r.gpu.too_big},           {"copy_failed", r.gpu.copy_failed}};
    if (!write_json(doc, json_path)) return false;
  }
  std::fprintf(stderr,
               "netdaq ingest: %llu packets (%llu dropped) -> %llu frames sent (%llu complete, %llu incomplete) in "
               "%.2f s\n",
               (unsigned long long)packets, (unsigned long long)dropped, (unsigned long long)r.frames,
               (unsigned long long)r.frames_complete, (unsigned long long)r.frames_incomplete, r.seconds);
  if (r.gpu.on)
    std::fprintf(stderr,
                 "  gpu staging: %llu frames (%llu bytes) copied into %u pinned buffers, %llu dropped (every staging "
                 "buffer busy), %llu too big, %llu copies failed\n",
                 (unsigned long long)r.gpu.frames_staged, (unsigned long long)r.gpu.bytes_staged, r.gpu.buffers,
                 (unsigned long long)r.gpu.dropped_no_staging, (unsigned long long)r.gpu.too_big,
                 (unsigned long long)r.gpu.copy_failed);
  for (const auto& d : r.sink.destinations) print_destination(d);
  print_destination(r.sink.total);
  if (!r.drained) std::fprintf(stderr, "  not drained: %llu fragments still in flight at the end\n",
                               (unsigned long long)r.sink.total.in_flight);
  if (!sink_invariant_holds(r.sink)) std::fprintf(stderr, "  ERROR: the sink's counters do not add up\n");
  return true;
}

bool print_build_result(const BuildResult& r, const std::string& json_path) {
  const fleet::BuilderStats& s = r.stats;
  {
    json nodes = json::array();
    for (const auto& n : s.nodes)
      nodes.push_back({{"node", n.node}, {"fragments", n.fragments}, {"bytes", n.bytes}, {"incomplete", n.incomplete},
                       {"missing", n.missing}, {"late", n.late}, {"duplicate", n.duplicate}});
    const json doc{{"seconds", r.seconds},
                   {"frames",
                    {{"built", s.frames}, {"complete", s.frames_complete}, {"incomplete", s.frames_incomplete},
                     {"timed_out", s.frames_timed_out}, {"taken", r.frames}}},
                   {"nodes", nodes},
                   {"receiver", receiver_json(s.receiver)},
                   {"check",
                    {{"fragments", r.fragments_checked}, {"chunks", r.chunks_checked},
                     {"chunks_missing", r.chunks_missing}, {"errors", r.check_errors},
                     {"first_error", r.first_error}}}};
    if (!write_json(doc, json_path)) return false;
  }
  std::fprintf(stderr, "netdaq build: %llu frames (%llu complete, %llu incomplete, %llu timed out) in %.2f s\n",
               (unsigned long long)s.frames, (unsigned long long)s.frames_complete,
               (unsigned long long)s.frames_incomplete, (unsigned long long)s.frames_timed_out, r.seconds);
  for (const auto& n : s.nodes)
    std::fprintf(stderr, "  node %u: fragments %llu (%llu bytes, %llu incomplete), missing %llu, late %llu, "
                 "duplicate %llu\n",
                 n.node, (unsigned long long)n.fragments, (unsigned long long)n.bytes,
                 (unsigned long long)n.incomplete, (unsigned long long)n.missing, (unsigned long long)n.late,
                 (unsigned long long)n.duplicate);
  const auto& rc = s.receiver;
  std::fprintf(stderr,
               "  receiver: %llu fragments, %llu placed; refused: no_buffer %llu, too_big %llu, malformed %llu, "
               "late %llu, duplicate %llu, receive_failed %llu; %llu connections, %llu disconnects\n",
               (unsigned long long)rc.fragments, (unsigned long long)rc.placed, (unsigned long long)rc.no_buffer,
               (unsigned long long)rc.too_big, (unsigned long long)rc.malformed, (unsigned long long)rc.late,
               (unsigned long long)rc.duplicate, (unsigned long long)rc.receive_failed,
               (unsigned long long)rc.connections, (unsigned long long)rc.disconnects);
  if (r.fragments_checked)
    std::fprintf(stderr, "  check: %llu fragments, %llu chunks (%llu missing), %llu wrong%s%s\n",
                 (unsigned long long)r.fragments_checked, (unsigned long long)r.chunks_checked,
                 (unsigned long long)r.chunks_missing, (unsigned long long)r.check_errors,
                 r.first_error.empty() ? "" : ": ", r.first_error.c_str());
  return true;
}

}  // namespace netdaq::cli
