// `netdaq capture`, stage 2: polls every rx queue and writes each packet's frame to the pcap
// file until --count, --duration or Ctrl-C, or a packet without its frame.
#pragma once

#include <cstdint>
#include <string>

#include "capture_plan.h"

namespace netdaq::cli {

struct CaptureResult {
  uint64_t written = 0, bytes = 0;
  double seconds = 0;
  std::string refused;  // why capture stopped at a packet without its frame ("" if it did not)
};

CaptureResult capture_frames(const CaptureOptions& o, CapturePlan& p);

}  // namespace netdaq::cli
