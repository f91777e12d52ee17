// `netdaq capture`, stage 1, the plan: the config, checked to give whole frames before
// anything is opened, the pcap file and the session.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "netdaq/netdaq.h"
#include "pcap_file.h"

namespace netdaq::cli {

struct CaptureOptions {
  std::string config;
  std::string output;
  uint64_t count = 0;     // 0: no limit
  double duration = 0;    // 0: no limit
};

struct CapturePlan {
  std::FILE* out = stdout;  // the text; stderr when the pcap goes to stdout
  PcapFile pcap;
  std::unique_ptr<Session> session;  // declared after the file: closed before it
  std::vector<RxQueue*> queues;
};

// False when something failed (said on stderr).
bool plan_capture(const CaptureOptions& o, CapturePlan& p);

}  // namespace netdaq::cli
