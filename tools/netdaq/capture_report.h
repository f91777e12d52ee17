// `netdaq capture` as the user sees it: the headline, then the summary (packets written,
// per-queue counts and drops, packets the kernel kept) and the errors.
#pragma once

#include "capture_loop.h"
#include "capture_plan.h"

namespace netdaq::cli {

void print_capture_headline(const CaptureOptions& o, const CapturePlan& p);
// closed / close_error: how closing the pcap file went. Returns the exit code.
int report_capture(const CaptureOptions& o, const CapturePlan& p, const CaptureResult& r, bool closed,
                   const std::string& close_error);

}  // namespace netdaq::cli
