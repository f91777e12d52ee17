// netdaq ingest with a reorder of `frames: gpu` (docs/fleet.md, "GPU frames"): an rx queue's
// bursts go into a gpu::FramePipeline; each frame it hands out is copied into one of N pinned
// host staging buffers (gpu::FrameStaging, a copy stream of its own) and its device buffer goes
// back to the pipeline as soon as that copy is over; the host copy goes to the FrameSink with
// the staging buffer as its token, freed when the sink hands the token back. A frame that finds
// every staging buffer busy is dropped and counted (dropped_no_staging). Debian's UCX has no
// CUDA transports, so the staged bytes are what crosses PCIe on the way out.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "netdaq/fleet.h"
#include "netdaq/frame_staging.h"
#include "netdaq/gpu.h"
#include "fleet_report.h"
#include "netdaq/host_frames.h"

namespace netdaq {
class Session;
}

namespace netdaq::cli {

class GpuFrameForwarder {
 public:
  // staging_buffers: 0 picks credits x destinations + max_open_frames (what can be in flight).
  GpuFrameForwarder(Session& session, std::string_view interface, const ReorderConfig& reorder,
                    fleet::FrameSink& sink, uint32_t staging_buffers);
  ~GpuFrameForwarder();

  void receive(RxBurst&& burst) noexcept;  // into the pipeline
  uint64_t forward() noexcept;             // frames sent to the sink by this call
  void give_back() noexcept;               // staging buffers the sink is done with
  // End of run: the pipeline flushed, every frame staged (waiting up to timeout_ms for
  // staging buffers the sink holds) and sent. Returns the frames sent.
  uint64_t finish(uint32_t timeout_ms) noexcept;
  uint64_t complete() const noexcept { return complete_; }
  uint64_t incomplete() const noexcept { return incomplete_; }
  uint32_t staging_buffers() const noexcept { return staging_.buffers(); }
  // The pipeline's counters as the assembler's (the JSON's frames.assembler) and the staging's.
  HostFrameStats frame_stats() const noexcept;
  IngestGpuStaging staging() const noexcept;

 private:
  struct Held {              // by staging buffer
    gpu::Frame frame;        // the device frame, until its copy is over
    std::vector<uint64_t> presence;  // bit g: granule g arrived (reserved once)
    fleet::OutFrame out;
  };
  void stage(gpu::Frame f) noexcept;
  uint64_t send_ready() noexcept;

  gpu::FramePipeline pipeline_;
  gpu::FrameStaging staging_;
  fleet::FrameSink& sink_;
  std::vector<Held> held_;
  std::vector<uint8_t> with_sink_;  // by staging buffer: the sink still reads it
  uint64_t complete_ = 0, incomplete_ = 0;
};

uint64_t realtime_now_ns() noexcept;

}  // namespace netdaq::cli
