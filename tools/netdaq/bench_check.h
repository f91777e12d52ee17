// The accounting `netdaq bench` checks when it runs both ends (docs/cli.md, docs/concepts.md):
// what the senders sent and the receivers did not get (loss, from the payloads' sequence
// numbers) must be what the queues counted as dropped. A mismatch exits non-zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "netdaq/stats.h"

namespace netdaq::cli {

struct BenchAccounting {
  uint64_t lost = 0;     // sent - unique received (the streams' loss)
  uint64_t counted = 0;  // drops that lose a sent packet: every reason except tx_full (the
                         // sender retries) and tx_unsent (never counted as sent)
  // Kernel drops of queues whose mode says they are counted per GRO batch (the socket engine
  // without its eBPF counter): each stands for 1 to `batch` datagrams. 0 elsewhere: exact.
  uint64_t batch_kernel = 0;
  uint64_t batch = 1;
  // "per datagram" (every drop counted once), or "per batch" (batch_kernel > 0 may be batches)
  std::string kernel_drops_counted = "per datagram";

  uint64_t most() const noexcept { return counted + batch_kernel * (batch - 1); }
  bool holds() const noexcept { return counted <= lost && lost <= most(); }
  // "lost 1,000 != counted drops 0 (tx_error=12)": what does not add up, for the error line
  std::string describe() const;
  std::string reasons;  // the counted drops per reason ("kernel=3, tx_error=1" or "none")
};

// The most datagrams one GRO packet of SIZE-byte payloads holds: netdaq's sender puts up to
// 128 segments (UDP_MAX_SEGMENTS since Linux 6.9) and 65,507 bytes in one GSO message.
uint64_t gro_batch_limit(uint32_t size) noexcept;

// True when the queue's kernel drops count GRO batches, not datagrams (its mode says so).
bool kernel_drops_per_batch(const QueueStats& s) noexcept;

// lost against the drops of every queue in STATS (rx and tx: a tx_error is a sent packet lost).
BenchAccounting bench_accounting(uint64_t lost, const std::vector<QueueStats>& stats, uint32_t size);

}  // namespace netdaq::cli
