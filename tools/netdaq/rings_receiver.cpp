// The receiver thread of an rx queue whose rings belong to a gpu::XskFrameReceiver (rx.reorder
// launch: rings, docs/gpu-afxdp.md): the packets go by in the rings' owner (a persistent
// kernel, or its CPU thread with frames: host); this thread only takes the finished frames
// (released at once), publishes the owner's counts for the controller and the metrics server,
// and at the stop closes the frames still open.
#include "receiver.h"

#include "idle_backoff.h"
#include "netdaq/gpu_xsk.h"

namespace netdaq::cli {

namespace {

void publish(Receiver& r, const gpu::PipelineStats& s, uint64_t now) noexcept {
  if (s.packets_in && !r.first_ns) r.first_ns = now;
  if (s.packets_in) r.last_ns = now;
  // Every packet taken once, whatever its fate (duplicates aside): what the controller waits for.
  r.pub_taken.store(s.packets_in, std::memory_order_relaxed);
  r.pub_unique.store(s.packets_in - s.duplicate, std::memory_order_relaxed);
  r.pub_dups.store(s.duplicate, std::memory_order_relaxed);
  r.pub_malformed.store(s.malformed, std::memory_order_relaxed);
  r.pub_last_ns.store(r.last_ns, std::memory_order_relaxed);
  if (r.published) r.published->publish(s);
}

}  // namespace

void rings_receiver_loop(Receiver& r, const TrafficOptions& opt, const std::atomic<bool>& stop) noexcept {
  gpu::XskFrameReceiver& rings = *r.rings;
  IdleBackoff idle(opt.busy_poll);
  uint64_t taken = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    bool any = false;
    while (gpu::Frame f = rings.next_frame()) ++r.frames_out, any = true;
    const gpu::PipelineStats s = rings.stats();
    if (s.packets_in != taken) {
      taken = s.packets_in;
      any = true;
      publish(r, s, payload_clock_ns());
    }
    if (any)
      idle.reset();
    else
      idle.wait();
  }
  rings.stop();
  while (gpu::Frame f = rings.next_frame()) ++r.frames_out;
  const gpu::PipelineStats s = rings.stats();
  publish(r, s, s.packets_in != taken ? payload_clock_ns() : r.last_ns);
}

}  // namespace netdaq::cli
