// The plan of a traffic run: checks that every tx queue can carry the payload, and which
// sender and receiver threads to start (one per tx / rx queue) with their CPUs, counts and
// GPU pipelines.
#pragma once

#include <memory>
#include <vector>

#include "netdaq/netdaq.h"
#include "receiver.h"
#include "sender.h"
#include "traffic.h"

namespace netdaq::cli {

struct Workers {
  std::vector<std::unique_ptr<Sender>> senders;
  std::vector<std::unique_ptr<Receiver>> receivers;

  // What the threads have published so far (the controller's view while they run).
  bool senders_done() const noexcept;
  uint64_t sent() const noexcept;  // only once senders_done()
  uint64_t rx_unique() const noexcept;
  uint64_t rx_last_ns() const noexcept;
  // Every receiver's queue reads a finite source (a capture file) that has ended, and each
  // receiver has checked all of its packets (false without receivers).
  bool rx_finished() const noexcept;
};

// Throws Error(invalid_config) when a tx queue's buffers cannot hold opt.payload_size.
Workers plan_traffic(Session& session, const TrafficOptions& opt);

}  // namespace netdaq::cli
