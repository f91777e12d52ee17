#include "sender.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "idle_backoff.h"
#include "worker_thread.h"

namespace netdaq::cli {

namespace {

// After a stop (deadline, count or Ctrl-C) a sender still offers the rest of its current
// burst for up to this long, so that stopping does not leave packets unsent.
constexpr uint64_t kFinishBurstNs = 500'000'000;

// Writes the payload format of `size` bytes into p: the header and as much as fits in
// segment 0, the rest of the pattern in segment 1 (header-data split tx queues). Without
// `pattern` (the receiver checks headers only) the header alone is written.
void write_split_payload(Packet& p, uint32_t size, uint32_t stream, uint64_t seq, uint64_t now, bool pattern) noexcept {
  const auto head = p.buffer(0);
  const uint32_t first = std::min<uint32_t>(size, static_cast<uint32_t>(head.size()));
  if (pattern) write_payload(head.first(first), stream, seq, now);
  else write_payload_header(head.first(first), stream, seq, now);
  p.set_size(first, 0);
  if (p.segments() > 1) {
    if (pattern) fill_pattern(p.buffer(1).first(size - first), stream, seq, first);
    p.set_size(size - first, 1);
  }
}

class SenderLoop {
 public:
  SenderLoop(Sender& s, const TrafficOptions& opt, uint64_t deadline_ns, const std::atomic<bool>& stop) noexcept
      : s_(s),
        size_(opt.payload_size),
        batch_(std::max<uint32_t>(1, s.q->config().batch_size)),
        deadline_ns_(deadline_ns),
        busy_(opt.busy_poll),
        pattern_(opt.verify),
        stop_(stop) {}

  void run() noexcept {
    IdleBackoff idle(busy_);
    while (!(s_.count && seq_ >= s_.count)) {
      // One clock read per burst: the deadline's and the payloads' send time.
      const uint64_t now = payload_clock_ns();
      if (stop_.load(std::memory_order_relaxed) || (deadline_ns_ && now >= deadline_ns_)) break;
      const uint64_t want = s_.count ? std::min<uint64_t>(batch_, s_.count - seq_) : batch_;
      TxBurst burst = s_.q->allocate(want);
      if (!burst) {  // pool empty: buffers still with the engine
        idle.wait();
        continue;
      }
      fill(burst, now);
      if (!send_all(burst)) break;
      idle.reset();
    }
    s_.last_ns = payload_clock_ns();
    s_.done.store(true, std::memory_order_release);
  }

 private:
  bool stopping() const noexcept {
    return stop_.load(std::memory_order_relaxed) || (deadline_ns_ && payload_clock_ns() >= deadline_ns_);
  }

  void fill(TxBurst& burst, uint64_t now) noexcept {
    if (!pattern_ && size_ >= kPayloadHeaderSize && std::endian::native == std::endian::little) {
      fill_headers(burst, now);
    } else {
      for (Packet& p : burst) write_split_payload(p, size_, s_.stream, seq_++, now, pattern_);
    }
    if (!s_.first_ns) s_.first_ns = now;
  }

  // --no-verify: each packet gets its 24 header bytes (the format's little-endian layout) and
  // nothing else, as testpmd's txonly leaves its payload as it is. Three 8-byte stores from
  // registers: a struct built on the stack and copied out made every packet wait on a store
  // forwarding stall (the 16-byte load over the 8-byte store of seq).
  void fill_headers(TxBurst& burst, uint64_t now) noexcept {
    static_assert(kPayloadHeaderSize == 24);
    const uint64_t magic_stream = uint64_t{kPayloadMagic} | (uint64_t{s_.stream} << 32);
    for (Packet& p : burst) {
      const auto head = p.buffer(0);
      if (__builtin_expect(p.segments() > 1 || head.size() < size_, 0)) {
        write_split_payload(p, size_, s_.stream, seq_++, now, false);
        continue;
      }
      const uint64_t seq = seq_++;
      std::memcpy(head.data(), &magic_stream, 8);
      std::memcpy(head.data() + 8, &seq, 8);
      std::memcpy(head.data() + 16, &now, 8);
      p.set_size(size_, 0);
    }
  }

  // The send time is when a packet is offered to the engine: a retried packet gets a new one.
  void restamp(TxBurst& burst) const noexcept {
    const uint64_t t = payload_clock_ns();
    for (Packet& p : burst) stamp_payload(p.buffer(0).first(std::min<size_t>(size_, p.buffer(0).size())), t);
  }

  // send() takes what the engine accepts now (pacing, full socket buffer): retry the rest.
  // Returns false when the engine took nothing for kFinishBurstNs after a stop; the rest is
  // released (counted tx_unsent).
  bool send_all(TxBurst& burst) noexcept {
    IdleBackoff spins(busy_);
    bool retry = false;
    uint64_t give_up_ns = 0;  // set once stopping: finish this burst, but not forever
    while (burst) {
      if (retry) restamp(burst);
      retry = true;
      if (const size_t n = burst.send()) {
        s_.sent += n;
        s_.bytes += n * size_;
        spins.reset();
        continue;
      }
      if (stopping()) {
        const uint64_t t = payload_clock_ns();
        if (!give_up_ns) give_up_ns = t + kFinishBurstNs;
        if (t >= give_up_ns) break;
      }
      spins.wait();
    }
    if (!burst) return true;
    burst.release();
    return false;
  }

  Sender& s_;
  const uint32_t size_;
  const uint32_t batch_;
  const uint64_t deadline_ns_;
  const bool busy_;
  const bool pattern_;  // the receiver checks every byte (else it reads headers only)
  const std::atomic<bool>& stop_;
  uint64_t seq_ = 0;
};

}  // namespace

void sender_loop(Sender& s, const TrafficOptions& opt, uint64_t deadline_ns, const std::atomic<bool>& stop) noexcept {
  setup_worker_thread(s.cpu, "ndq-tx");
  SenderLoop(s, opt, deadline_ns, stop).run();
}

}  // namespace netdaq::cli
