// rx.reorder launch: rings (docs/gpu-afxdp.md): what the receive loop that owns an afxdp
// queue's rings does not do, with the key to name. One check for the config's validation and
// for gpu::XskFrameReceiver built from a ReorderConfig in code.
#pragma once

#include <optional>
#include <string>

#include "netdaq/config.h"

namespace netdaq::detail {

struct RingsProblem {
  std::string key;  // under rx.reorder[i]
  std::string value;
  std::string why;
};

std::optional<RingsProblem> rings_launch_problem(const ReorderConfig& c);

}  // namespace netdaq::detail
