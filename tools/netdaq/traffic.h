// Sender and receiver loops of the netdaq payload format, shared by `netdaq run` and
// `netdaq bench`: one sender thread per TX queue, one receiver thread per RX queue, and a
// controller (the calling thread) that stops them, prints live samples and collects results.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "latency_histogram.h"
#include "netdaq/netdaq.h"

namespace netdaq::cli {

struct StreamResult {
  std::string rx_queue;     // "-" when no RX queue saw the stream
  uint32_t stream = 0;
  bool expected_known = false;
  uint64_t expected = 0;    // packets the sender sent
  uint64_t received = 0, unique = 0, lost = 0, duplicates = 0, reordered = 0, malformed = 0, late = 0;
  LatencyHistogram latency;  // send time -> receive poll, same host clock
};

struct TxResult {
  std::string queue;
  uint32_t stream = 0;
  uint64_t sent = 0;   // packets accepted by the engine (sequences 0 .. sent-1)
  uint64_t bytes = 0;
  double seconds = 0;  // first to last send
  uint64_t first_ns = 0, last_ns = 0;
};

struct RxResult {
  std::string queue;
  uint64_t packets = 0, bytes = 0;
  double seconds = 0;              // first to last packet
  uint64_t foreign = 0;            // malformed without a readable header (no stream)
  uint64_t first_ns = 0, last_ns = 0;
};

struct LiveSample {
  double t = 0;                    // seconds since start
  double rx_pps = 0, rx_gbps = 0, tx_pps = 0, tx_gbps = 0;
  uint64_t rx_packets = 0, tx_packets = 0;
  uint64_t drops = 0;              // every drop reason of every queue except tx_full
  uint64_t reordered = 0, lost = 0, duplicates = 0, malformed = 0;
  std::array<uint64_t, kDropReasons> drops_by_reason{};  // every queue, every reason (tx_full too)
  uint64_t rx_pool_in_use = 0, tx_pool_in_use = 0;        // buffers the queues hold now
};

struct TrafficOptions {
  uint32_t payload_size = 1472;     // bytes each sender writes per packet
  uint32_t expected_size = 0;       // receivers: packets of another size are malformed (0: any)
  std::vector<uint64_t> tx_counts;  // packets per sender (0 or missing: unlimited)
  double duration_s = 0;            // senders stop after this (0: no limit)
  uint32_t drain_ms = 200;          // keep receiving after the senders stop
  uint32_t stats_interval_ms = 1000;
  bool verify = true;               // write and check every pattern byte (else the header only)
  bool busy_poll = false;           // senders and receivers never sleep when idle
  uint64_t window = 65536;          // SequenceTracker window
  // Receivers without senders in this process:
  std::vector<uint64_t> rx_expected;  // per stream id: expected count (rx-only --count)
  double idle_timeout_s = 0;          // stop this long after the last packet (0: never)
  std::vector<int> tx_cpu, rx_cpu;    // pin thread i (missing / -1: no pinning)
  // GPU data plane: rx queue i's bursts go to pipeline i after they are checked (null: none).
  std::vector<gpu::FramePipeline*> rx_pipelines;
  // rx.reorder launch: rings: rx queue i's rings belong to receiver i, which takes every packet
  // itself; the receiver thread only takes its frames (null: none).
  std::vector<gpu::XskFrameReceiver*> rx_rings;
  std::vector<const ReorderConfig*> rx_frames;  // rx queue i's rx.reorder entry (null: none)
  // Metrics (run --metrics): rx queue i's receiver publishes its pipeline's stats there (null: none).
  std::vector<PublishedPipelineStats*> rx_published;
};

// What the GPU pipeline of an rx queue made of its packets.
struct GpuResult {
  std::string queue;
  gpu::PipelineStats stats;
  uint64_t frames_out = 0;         // frames handed to the application (here: released at once)
  double seconds = 0;              // first to last packet of the queue
  std::string malformed_reason;    // why the last malformed packet was (span modes; "" if none)
  bool rings = false;              // launch: rings (the receiver took the packets from the rings)
};

struct TrafficResult {
  std::vector<TxResult> tx;
  std::vector<RxResult> rx;
  std::vector<StreamResult> streams;
  std::vector<QueueStats> stats;  // session stats at the end
  std::vector<FlowStats> flows;   // per-flow counters (engines that classify: afxdp)
  std::vector<GpuResult> gpu;
  // rx.reorder launch: rings: no thread checks those queues' streams. When every receiver owns
  // its rings, what was sent and neither taken nor dropped by the kernel (queue stats) is lost;
  // so are the packets missing from their frames and those taken but placed in none.
  uint64_t rings_lost = 0;
  double elapsed_s = 0;
  bool interrupted = false;

  uint64_t total_lost() const noexcept;
  uint64_t total_drops() const noexcept;      // all reasons except tx_full (retried)
  uint64_t total_malformed() const noexcept;  // incl. foreign packets
  // First to last packet of the queue those stats are of (0 when unknown).
  double seconds_of(const QueueStats& s) const noexcept;
};

using LiveCallback = std::function<void(const LiveSample&)>;

// Runs senders on every TX queue and receivers on every RX queue of the session until the
// senders are done (count or duration) and the drain is over, or Ctrl-C. With no TX queue
// the receivers stop at rx_expected, idle_timeout_s, duration_s or Ctrl-C.
// Stages: traffic_plan (checks, which threads), sender / receiver (the threads), traffic_stop
// and live_sampler (the controller), traffic_results (what they counted).
TrafficResult run_traffic(Session& session, const TrafficOptions& opt, const LiveCallback& live);

// run_traffic for a subcommand: a failure is printed as "<command>: <what>" on stderr and
// gives nullopt.
std::optional<TrafficResult> run_traffic_or_print_error(Session& session, const TrafficOptions& opt,
                                                        const LiveCallback& live, const char* command);

// The drops of a queue that count as lost: every reason except tx_full (the senders retry).
inline uint64_t drops_except_tx_full(const QueueStats& s) noexcept {
  return s.total_drops() - s.drop(DropReason::tx_full);
}

}  // namespace netdaq::cli
