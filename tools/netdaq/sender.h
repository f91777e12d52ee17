// A sender thread: writes the netdaq payload format to one tx queue (its stream id, sequences
// 0, 1, ...) until its count, the deadline or a stop.
#pragma once

#include <atomic>
#include <cstdint>

#include "netdaq/netdaq.h"
#include "traffic.h"

namespace netdaq::cli {

struct Sender {
  TxQueue* q = nullptr;
  uint32_t stream = 0;
  uint64_t count = 0;  // 0: unlimited
  int cpu = -1;
  // results
  uint64_t sent = 0, bytes = 0, first_ns = 0, last_ns = 0;
  std::atomic<bool> done{false};  // set (release) after the results are final
};

// The thread's body. deadline_ns: payload clock time to stop at (0: none).
void sender_loop(Sender& s, const TrafficOptions& opt, uint64_t deadline_ns, const std::atomic<bool>& stop) noexcept;

}  // namespace netdaq::cli
