#include "stats.h"

namespace netdaq::python {

py::dict to_dict(const QueueStats& s) {
  py::dict drops;
  for (size_t r = 0; r < kDropReasons; ++r) drops[to_string(static_cast<DropReason>(r))] = s.drops[r];
  py::dict engine;
  for (const auto& [name, value] : s.engine_counters) engine[name.c_str()] = value;
  py::dict d;
  d["interface"] = s.interface;
  d["queue"] = s.queue;
  d["is_rx"] = s.is_rx;
  d["packets"] = s.packets;
  d["bytes"] = s.bytes;
  d["bursts"] = s.bursts;
  d["copies"] = s.copies;
  d["drops"] = drops;
  d["total_drops"] = s.total_drops();
  d["errors"] = s.errors;
  d["connections"] = s.connections;
  d["pool_in_use"] = s.pool_in_use;
  d["mode"] = s.mode;
  d["engine_counters"] = engine;
  return d;
}

py::dict to_dict(const FlowStats& s) {
  py::dict d;
  d["interface"] = s.interface;
  d["flow"] = s.flow;
  d["unmatched"] = s.unmatched;
  d["queue"] = s.queue;
  d["packets"] = s.packets;
  d["bytes"] = s.bytes;
  d["wrong_queue"] = s.wrong_queue;
  return d;
}

py::dict to_dict(const gpu::PipelineStats& s) {
  py::dict d;
  d["packets_in"] = s.packets_in;
  d["packets_placed"] = s.packets_placed;
  d["duplicate"] = s.duplicate;
  d["late"] = s.late;
  d["malformed"] = s.malformed;
  d["control"] = s.control;
  d["no_stream"] = s.no_stream;
  d["no_buffer"] = s.no_buffer;
  d["frames_complete"] = s.frames_complete;
  d["frames_incomplete"] = s.frames_incomplete;
  d["frames_skipped"] = s.frames_skipped;
  d["frames_dropped"] = s.frames_dropped;
  d["packets_missing"] = s.packets_missing;
  d["bytes_missing"] = s.bytes_missing;
  d["bytes_to_gpu"] = s.bytes_to_gpu;
  d["jobs"] = s.jobs;
  d["waits"] = s.waits;
  d["wait_ns"] = s.wait_ns;
  d["gpu_errors"] = s.gpu_errors;
  return d;
}

py::dict to_dict(const gpu::StreamStats& s) {
  py::dict d;
  d["stream"] = s.stream;
  d["packets"] = s.packets;
  d["packets_placed"] = s.packets_placed;
  d["duplicate"] = s.duplicate;
  d["late"] = s.late;
  d["no_buffer"] = s.no_buffer;
  d["malformed"] = s.malformed;
  d["frames_complete"] = s.frames_complete;
  d["frames_incomplete"] = s.frames_incomplete;
  d["frames_skipped"] = s.frames_skipped;
  d["frames_dropped"] = s.frames_dropped;
  d["bytes_missing"] = s.bytes_missing;
  return d;
}

py::dict to_dict(const gpu::FrameInfo& i) {
  py::dict d;
  d["index"] = i.index;
  d["stream"] = i.stream;
  d["bytes"] = i.bytes;
  d["bytes_expected"] = i.bytes_expected;
  d["bytes_received"] = i.bytes_received;
  d["expected"] = i.expected;
  d["received"] = i.received;
  d["granule"] = i.granule;
  d["has_timestamp"] = i.has_timestamp;
  d["timestamp"] = i.timestamp;
  d["timestamp_frac"] = i.timestamp_frac;
  return d;
}

}  // namespace netdaq::python
