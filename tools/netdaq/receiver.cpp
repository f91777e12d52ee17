#include "receiver.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include "idle_backoff.h"
#include "worker_thread.h"

namespace netdaq::cli {

namespace {

constexpr uint32_t kMaxStreams = 1u << 16;  // higher stream ids count as foreign

class ReceiverLoop {
 public:
  ReceiverLoop(Receiver& r, const TrafficOptions& opt) noexcept : r_(r), opt_(opt) {
    // Span modes: the pipeline's stream stats go through this buffer, sized once here, so that
    // publishing them after each burst allocates nothing.
    if (!r_.pipeline || !r_.published) return;
    try {
      streams_.resize(r_.published->stream_capacity());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netdaq: %s: per-stream metrics off: %s\n", r_.q->name().c_str(), e.what());
    }
  }

  void run(const std::atomic<bool>& stop) noexcept {
    IdleBackoff idle(opt_.busy_poll);
    while (!stop.load(std::memory_order_relaxed)) {
      RxBurst b = r_.q->poll();
      if (!b) {
        if (untimed_) stamp(payload_clock_ns());  // the last bursts ended about now
        if (!finished_ && r_.q->finished()) {       // a replayed file ended: every packet was checked
          finished_ = true;
          r_.pub_finished.store(true, std::memory_order_release);
        }
        // The pipeline may hold the bursts the queue waits for: a job gathering small bursts
        // goes at its timeout, and finished jobs give theirs back, only when asked.
        if (r_.pipeline)
          while (gpu::Frame f = r_.pipeline->next_frame()) ++r_.frames_out;
        idle.wait();
        continue;
      }
      idle.reset();
      if (r_.count_only)
        count(b);
      else
        check(b);
    }
    if (untimed_) stamp(payload_clock_ns());
    if (r_.pipeline) drain_pipeline();
  }

 private:
  void stamp(uint64_t now) noexcept {
    if (!r_.first_ns) r_.first_ns = now;
    r_.last_ns = now;
    r_.pub_last_ns.store(now, std::memory_order_relaxed);
    untimed_ = 0;
  }

  // Count and release, like a receiver that only drains the queue. The clock (tens of ns on a
  // VM) is read on the first burst and every 16th, and when the queue runs dry.
  void count(RxBurst& b) noexcept {
    r_.bytes += b.bytes();
    r_.packets += b.size();
    b.release();
    if (++untimed_ == 16 || !r_.first_ns) stamp(payload_clock_ns());
  }

  void check(RxBurst& b) noexcept {
    const uint64_t now = payload_clock_ns();
    if (!r_.first_ns) r_.first_ns = now;
    r_.last_ns = now;
    for (const Packet& p : b) check_packet(p, now);
    hand_on(b);
    publish(now);
  }

  void check_packet(const Packet& p, uint64_t now) noexcept {
    const uint32_t size = p.size();
    ++r_.packets;
    r_.bytes += size;
    PayloadHeader h;
    const PayloadStatus st = verify_payload(p, &h, opt_.verify);
    if ((st != PayloadStatus::ok && st != PayloadStatus::corrupt) || h.stream >= kMaxStreams) {
      ++r_.foreign;
      return;
    }
    StreamState& ss = stream(h.stream);
    if (st == PayloadStatus::corrupt || (opt_.expected_size && size != opt_.expected_size)) {
      ss.tracker.add_malformed();
      return;
    }
    ss.tracker.add(h.sequence);
    ss.latency.add(now > h.send_ns ? now - h.send_ns : 0);
  }

  // A stream's state, made on its first packet. The last one is kept at hand: a burst
  // usually holds one stream.
  StreamState& stream(uint32_t id) noexcept {
    if (last_ && last_id_ == id) return *last_;
    if (id >= r_.streams.size()) r_.streams.resize(id + 1);
    auto& slot = r_.streams[id];
    if (!slot) {
      slot = std::make_unique<StreamState>(opt_.window);
      r_.active.push_back(slot.get());
    }
    last_ = slot.get();
    last_id_ = id;
    return *last_;
  }

  // Checked bursts go on to the GPU pipeline, if any; its frames are released at once.
  void hand_on(RxBurst& b) noexcept {
    if (!r_.pipeline) {
      b.release();
      return;
    }
    r_.pipeline->submit(std::move(b));
    while (gpu::Frame f = r_.pipeline->next_frame()) ++r_.frames_out;
    publish_pipeline();
  }

  // The pipeline's stats (and, span modes, its streams') for a metrics server, if any.
  void publish_pipeline() noexcept {
    if (!r_.published) return;
    if (streams_.empty()) {
      r_.published->publish(r_.pipeline->stats());
      return;
    }
    const size_t n = std::min(r_.pipeline->stream_stats(std::span<gpu::StreamStats>(streams_)), streams_.size());
    r_.published->publish(r_.pipeline->stats(), std::span<const gpu::StreamStats>(streams_.data(), n));
  }

  void publish(uint64_t now) noexcept {
    uint64_t u = 0, l = 0, o = 0, d = 0, m = r_.foreign;
    for (StreamState* s : r_.active) {
      u += s->tracker.unique();
      l += s->tracker.lost_so_far();
      o += s->tracker.reordered();
      d += s->tracker.duplicates();
      m += s->tracker.malformed();
    }
    r_.pub_unique.store(u, std::memory_order_relaxed);
    r_.pub_lost.store(l, std::memory_order_relaxed);
    r_.pub_reordered.store(o, std::memory_order_relaxed);
    r_.pub_dups.store(d, std::memory_order_relaxed);
    r_.pub_malformed.store(m, std::memory_order_relaxed);
    r_.pub_last_ns.store(now, std::memory_order_relaxed);
  }

  // The rest after the stop: frames still open, and GPU work in flight.
  void drain_pipeline() noexcept {
    r_.pipeline->flush();
    try {
      r_.pipeline->synchronize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netdaq: gpu pipeline of %s: %s\n", r_.q->name().c_str(), e.what());
    }
    while (gpu::Frame f = r_.pipeline->next_frame()) ++r_.frames_out;
    publish_pipeline();
  }

  Receiver& r_;
  const TrafficOptions& opt_;
  uint32_t untimed_ = 0;  // count_only: bursts since the clock was last read
  bool finished_ = false;  // the queue said finished()
  StreamState* last_ = nullptr;
  uint32_t last_id_ = 0;
  std::vector<gpu::StreamStats> streams_;  // published->stream_capacity() entries, or none
};

}  // namespace

void receiver_loop(Receiver& r, const TrafficOptions& opt, const std::atomic<bool>& stop) noexcept {
  setup_worker_thread(r.cpu, "ndq-rx");
  if (r.rings) return rings_receiver_loop(r, opt, stop);
  ReceiverLoop(r, opt).run(stop);
}

}  // namespace netdaq::cli
