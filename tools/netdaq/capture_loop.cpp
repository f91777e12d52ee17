#include "capture_loop.h"

#include <time.h>

#include <chrono>

#include "idle_backoff.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Writes the burst's frames (up to --count). Returns false when a packet had no frame.
bool write_burst(const CaptureOptions& o, CapturePlan& p, RxQueue& q, RxBurst& burst, CaptureResult& res) {
  timespec now{};  // the time the burst was polled: engines give no receive timestamps yet
  clock_gettime(CLOCK_REALTIME, &now);
  for (const Packet& pkt : burst) {
    if (o.count && res.written >= o.count) break;
    const auto frame = pkt.frame();
    if (frame.empty()) {
      res.refused = "queue " + q.name() + " delivered a packet without its Ethernet frame (engine '" +
                    p.session->config().find_interface(q.interface())->engine + "'); capture needs whole frames";
      return false;
    }
    p.pcap.write(frame, now);
    ++res.written;
    res.bytes += frame.size();
  }
  return true;
}

// One poll of every queue. Returns whether any queue had packets.
bool poll_once(const CaptureOptions& o, CapturePlan& p, CaptureResult& res) {
  bool any = false;
  for (RxQueue* q : p.queues) {
    RxBurst burst = q->poll();
    if (burst.empty()) continue;
    any = true;
    if (!write_burst(o, p, *q, burst, res)) break;
  }
  return any;
}

}  // namespace

CaptureResult capture_frames(const CaptureOptions& o, CapturePlan& p) {
  CaptureResult res;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration));
  IdleBackoff idle;
  while (!stop_requested() && res.refused.empty() && !(o.count && res.written >= o.count) &&
         !(o.duration > 0 && Clock::now() >= deadline)) {
    if (poll_once(o, p, res))
      idle.reset();
    else
      idle.wait();
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace netdaq::cli
