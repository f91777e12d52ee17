#include "core/rings_launch.h"

#include "core/config_limits.h"

namespace netdaq::detail {

std::optional<RingsProblem> rings_launch_problem(const ReorderConfig& c) {
  if (c.mode != ReorderMode::sequence)
    return RingsProblem{"mode", to_string(c.mode), "launch rings places by sequence number only: use mode sequence"};
  if (c.input != SampleFormat::raw)
    return RingsProblem{"input", to_string(c.input), "launch rings copies samples as they are: use input raw"};
  if (c.output != SampleFormat::raw)
    return RingsProblem{"output", to_string(c.output), "launch rings copies samples as they are: use output raw"};
  if (c.max_open_frames == 0 || c.max_open_frames > kRingsMaxOpenFrames)
    return RingsProblem{"max_open_frames", std::to_string(c.max_open_frames),
                        "must be 1.." + std::to_string(kRingsMaxOpenFrames) + " with launch rings"};
  if (c.frame_buffers <= c.max_open_frames || c.frame_buffers > kRingsMaxFrameBuffers)
    return RingsProblem{"frame_buffers", std::to_string(c.frame_buffers),
                        "must be more than max_open_frames (" + std::to_string(c.max_open_frames) + ") and at most " +
                            std::to_string(kRingsMaxFrameBuffers) + " with launch rings"};
  return std::nullopt;
}

}  // namespace netdaq::detail
