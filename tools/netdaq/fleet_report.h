// What `netdaq ingest` and `netdaq build` say at the end: text on stderr, and with --json FILE
// every counter of the sink or builder as JSON ("-": stdout; a file appears whole, renamed
// into place, so a script may wait for it while the process lingers) (docs/fleet.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "netdaq/fleet.h"
#include "netdaq/host_frames.h"
#include "netdaq/stats.h"

namespace netdaq::cli {

// A reorder of frames: gpu: frames copied from GPU memory into pinned host staging buffers
// before the sink sends them (tools/netdaq/ingest_gpu.h; docs/fleet.md, "GPU frames").
struct IngestGpuStaging {
  bool on = false;
  uint32_t buffers = 0;
  uint64_t buffer_bytes = 0;
  uint64_t frames_staged = 0, bytes_staged = 0;
  uint64_t dropped_no_staging = 0;  // frames dropped: every staging buffer was busy
  uint64_t too_big = 0, copy_failed = 0;
};

struct IngestResult {
  uint64_t frames = 0, frames_complete = 0, frames_incomplete = 0;  // handed to the sink
  HostFrameStats frame_stats;  // frames: gpu: the pipeline's counters
  IngestGpuStaging gpu;
  std::vector<QueueStats> queues;
  fleet::SinkStats sink;
  bool drained = false;  // every credit came back before --drain-ms ran out
  double seconds = 0;
};

struct BuildResult {
  fleet::BuilderStats stats;
  uint64_t frames = 0, complete = 0, incomplete = 0;
  uint64_t fragments_checked = 0, chunks_checked = 0, chunks_missing = 0, check_errors = 0;
  std::string first_error;
  double seconds = 0;
};

// fragments == acked + refused + no_credit + peer_down + in_flight_lost + in_flight, for
// every destination and the total.
bool sink_invariant_holds(const fleet::SinkStats& s);

// Return false when the JSON file cannot be written (said on stderr).
bool print_ingest_result(const IngestResult& r, const std::string& json_path);
bool print_build_result(const BuildResult& r, const std::string& json_path);

}  // namespace netdaq::cli
