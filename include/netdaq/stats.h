// Per-queue counters. Every packet that does not reach the application is counted under
// exactly one drop reason.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace netdaq {

enum class DropReason : uint8_t {
  ring_full,      // worker → application ring full (application too slow)
  pool_empty,     // no free buffer to receive into / allocate for TX
  kernel,         // dropped by the kernel/NIC before netdaq saw it (SO_RXQ_OVFL, imissed)
  malformed,      // truncated or unparsable packet / message
  oversize,       // larger than the buffer (datagram truncated, TCP message too long)
  flow_miss,      // matched no configured flow
  tx_full,        // TX: engine would not accept the packet (socket buffer / ring full)
  tx_error,       // TX: send failed (errno logged once)
  tx_unsent,      // TX: burst released with packets never sent
  count_
};
inline constexpr size_t kDropReasons = static_cast<size_t>(DropReason::count_);
const char* to_string(DropReason r) noexcept;

// A snapshot of one queue. [counter]: only grows, from 0 when the Session opened (rates
// are differences of two snapshots). [gauge]: the value now, up or down.
struct QueueStats {
  std::string interface;
  std::string queue;        // queue name, e.g. "sensor0/rx0"
  bool is_rx = true;
  uint64_t packets = 0;     // [counter] delivered to the application (RX) / accepted by the engine (TX)
  uint64_t bytes = 0;       // [counter] payload bytes of those packets
  uint64_t bursts = 0;      // [counter]
  uint64_t copies = 0;      // [counter] bytes copied on the data path (socket engine, staging)
  std::array<uint64_t, kDropReasons> drops{};  // [counter] per drop reason
  uint64_t errors = 0;      // [counter] OS errors seen (each also logged, rate-limited)
  uint64_t connections = 0; // [counter] TCP: connections accepted / established
  uint64_t pool_in_use = 0; // [gauge] buffers currently held
  std::string mode;         // how the engine runs the queue, e.g. "afxdp native zero-copy"
  // [counter] Raw engine counters behind the drop reasons (e.g. XSK rx_ring_full), for diagnosis.
  std::vector<std::pair<std::string, uint64_t>> engine_counters;

  uint64_t total_drops() const noexcept;
  uint64_t drop(DropReason r) const noexcept { return drops[static_cast<size_t>(r)]; }
};

// Counters of one configured flow, kept by engines that classify packets (afxdp's eBPF program).
// Every number here is a [counter].
struct FlowStats {
  std::string interface;
  uint32_t flow = 0;          // flow id; ignore when unmatched
  bool unmatched = false;     // the row for packets that matched no flow (passed to the kernel)
  uint16_t queue = 0;         // rx queue id the flow is steered to
  uint64_t packets = 0;       // steered to the flow's queue (unmatched: passed to the kernel)
  uint64_t bytes = 0;
  uint64_t wrong_queue = 0;   // matched, but arrived on another NIC queue than the flow's
                              // (passed to the kernel; steer the flow in the NIC: ethtool -N)
};

}  // namespace netdaq
