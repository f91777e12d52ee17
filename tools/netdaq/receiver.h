// A receiver thread: polls one rx queue, checks every netdaq payload (sequence, pattern,
// size) per stream and publishes running counts for the live line; or, for raw frames,
// only counts.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "latency_histogram.h"
#include "netdaq/netdaq.h"
#include "traffic.h"

namespace netdaq::cli {

struct StreamState {
  explicit StreamState(uint64_t window) : tracker(window) {}
  SequenceTracker tracker;
  LatencyHistogram latency;
};

struct Receiver {
  RxQueue* q = nullptr;
  gpu::FramePipeline* pipeline = nullptr;  // checked bursts go on to the GPU
  gpu::XskFrameReceiver* rings = nullptr;  // launch: rings: it takes the packets, this thread its frames
  uint32_t ring_packet_bytes = 0;          // ... each a UDP payload of payload_offset + payload_size
  PublishedPipelineStats* published = nullptr;  // the pipeline's stats for a metrics server
  uint64_t frames_out = 0;
  int cpu = -1;
  bool count_only = false;  // raw frames (engine_traits.h counts_only): not netdaq payloads
  std::vector<std::unique_ptr<StreamState>> streams;  // by stream id
  std::vector<StreamState*> active;                   // the non-null entries of streams
  uint64_t foreign = 0, packets = 0, bytes = 0, first_ns = 0, last_ns = 0;
  // Published once per burst for the controller.
  // Set once the queue's finite source (a capture file) has ended and every packet was checked.
  std::atomic<bool> pub_finished{false};
  std::atomic<uint64_t> pub_taken{0};  // launch: rings: packets its owner took (the queue counts none)
  std::atomic<uint64_t> pub_unique{0}, pub_lost{0}, pub_reordered{0}, pub_dups{0}, pub_malformed{0}, pub_last_ns{0};
};

// The thread's body: runs until stop, then flushes the GPU pipeline.
void receiver_loop(Receiver& r, const TrafficOptions& opt, const std::atomic<bool>& stop) noexcept;
// ... for a queue whose rings belong to r.rings (rings_receiver.cpp).
void rings_receiver_loop(Receiver& r, const TrafficOptions& opt, const std::atomic<bool>& stop) noexcept;

}  // namespace netdaq::cli
