// The ping-pong loop. Everything it needs is taken before the first message (the samples'
// room, the queues): the loop itself only polls, copies and sends, and never allocates.
#include "bench_pingpong.h"

#include <algorithm>
#include <cstring>

#include "signals.h"

namespace netdaq::cli {

namespace {

constexpr uint32_t kStream = 0;

enum class Outcome { returned, lost_there, lost_back, lost_either };

// The message awaited, found in a burst (held until the echo has copied it).
struct Arrival {
  RxBurst burst;
  const Packet* pkt = nullptr;
  uint64_t at_ns = 0;  // when the poll returned it, before any check (sockperf's receive time)
  explicit operator bool() const noexcept { return pkt != nullptr; }
};

class PingPong {
 public:
  // --role client: B is another process (b_rx_ and b_tx_ stay null).
  PingPong(Session& s, const PingPongOptions& o, PingPongResult& r, bool local_echo)
      : a_tx_(s.tx_queue("bench-tx")),
        b_rx_(local_echo ? &s.rx_queue("bench-rx") : nullptr),
        b_tx_(local_echo ? &s.tx_queue(kEchoTx) : nullptr),
        a_rx_(s.rx_queue(kEchoRx)),
        o_(o),
        r_(r) {}

  void run() {
    r_.half_rtt_ns.reserve(o_.count);
    if (b_rx_) r_.one_way_ns.reserve(o_.count);
    // Sequence 0, not counted: its sends wait for the tcp / rdma connections to come up (the
    // set-up perftest does before its first message), so that no sample includes a connect.
    r_.warmed_up = round_trip(0, o_.connect_ns, nullptr) == Outcome::returned;
    const uint64_t start = payload_clock_ns();
    const uint64_t deadline = o_.duration_s > 0 ? start + static_cast<uint64_t>(o_.duration_s * 1e9) : 0;
    uint64_t first = 0, last = 0;
    for (uint64_t seq = 1; seq <= o_.count; ++seq) {
      if (stop_requested() || (deadline && payload_clock_ns() >= deadline)) {
        r_.interrupted = true;
        break;
      }
      ++r_.messages;
      uint64_t t0 = 0;
      const Outcome out = round_trip(seq, o_.reply_ns, &t0);
      if (!first) first = t0;
      if (out == Outcome::lost_there) ++r_.lost_there;
      if (out == Outcome::lost_back) ++r_.lost_back;
      if (out == Outcome::lost_either) ++r_.lost_either;
      last = payload_clock_ns();
    }
    r_.seconds = last > first && first ? double(last - first) / 1e9 : 0;
    std::sort(r_.half_rtt_ns.begin(), r_.half_rtt_ns.end());
    std::sort(r_.one_way_ns.begin(), r_.one_way_ns.end());
  }

 private:
  // A -> B -> A. A sample ends when A's poll returns the message, as sockperf times it (its
  // clock is read right after recvfrom); the pattern check and the release follow, outside
  // the sample. send_ns bounds each send (a connection that is not up takes nothing).
  Outcome round_trip(uint64_t seq, uint64_t send_ns, uint64_t* t0_out) noexcept {
    uint64_t t0 = 0;
    if (!send_fresh(seq, payload_clock_ns() + send_ns, &t0)) return Outcome::lost_there;
    if (t0_out) *t0_out = t0;
    Arrival at_a;
    uint64_t there = 0;  // one way, A -> B (one clock: --role both)
    if (b_rx_) {
      Arrival at_b = await(*b_rx_, seq, t0 + o_.reply_ns);
      if (!at_b) return Outcome::lost_there;
      there = at_b.at_ns - t0;
      uint64_t t_echo = 0;
      if (!echo(at_b, payload_clock_ns() + send_ns, &t_echo)) return Outcome::lost_back;
      at_a = await(a_rx_, seq, t_echo + o_.reply_ns);
      if (!at_a) return Outcome::lost_back;
    } else {
      // B elsewhere: each way may take the reply timeout (the warm-up's: the connect time)
      at_a = await(a_rx_, seq, t0 + o_.reply_ns + send_ns);
      if (!at_a) return Outcome::lost_either;
    }
    at_a.burst.release();
    const uint64_t t1 = at_a.at_ns;
    if (!t0_out) return Outcome::returned;  // the warm-up: not counted
    ++r_.returned;
    r_.half_rtt_ns.push_back((t1 - t0) / 2);  // reserved: never reallocates
    if (b_rx_) r_.one_way_ns.push_back(there);
    return Outcome::returned;
  }

  // A fresh message of sequence seq from A's pool.
  bool send_fresh(uint64_t seq, uint64_t give_up, uint64_t* t0) noexcept {
    TxBurst b = allocate_one(a_tx_, give_up);
    if (!b) return false;
    Packet& p = b[0];
    const auto buf = p.buffer(0).first(o_.size);
    if (o_.verify) write_payload(buf, kStream, seq, payload_clock_ns());
    else write_payload_header(buf, kStream, seq, payload_clock_ns());
    p.set_size(o_.size);
    return send(b, give_up, t0);
  }

  // B sends back what it received: every byte (or, --no-verify, the header: as perftest,
  // whose buffers go out as they are), then lets go of the received buffer.
  bool echo(Arrival& in, uint64_t give_up, uint64_t* t) noexcept {
    TxBurst b = allocate_one(*b_tx_, give_up);
    if (!b) return false;
    Packet& p = b[0];
    const auto dst = p.buffer(0);
    const size_t want = o_.verify ? o_.size : kPayloadHeaderSize;
    size_t at = 0;
    for (unsigned s = 0; s < in.pkt->segments() && at < want; ++s) {
      const auto src = in.pkt->segment(s);
      const size_t n = std::min(src.size(), want - at);
      std::memcpy(dst.data() + at, src.data(), n);
      at += n;
    }
    p.set_size(o_.size);
    in.burst.release();
    return send(b, give_up, t);
  }

  static TxBurst allocate_one(TxQueue& q, uint64_t give_up) noexcept {
    for (;;) {
      if (TxBurst b = q.allocate(1)) return b;
      if (payload_clock_ns() >= give_up) return {};
    }
  }

  // Retried until the engine takes it (a tcp or rdma connection still coming up takes
  // nothing); *t is when the attempt that was taken started. Given up at give_up (released:
  // tx_unsent).
  static bool send(TxBurst& b, uint64_t give_up, uint64_t* t) noexcept {
    for (;;) {
      const uint64_t now = payload_clock_ns();
      if (b.send()) {
        if (t) *t = now;
        return true;
      }
      if (now >= give_up) {
        b.release();
        return false;
      }
    }
  }

  // Polls q (busy) until the message of sequence seq arrives or deadline passes. Anything
  // else in the way is counted: an earlier message that was given up (late), or not the
  // payload sent (malformed).
  Arrival await(RxQueue& q, uint64_t seq, uint64_t deadline) noexcept {
    for (uint32_t empty = 0;;) {
      if (RxBurst b = q.poll()) {
        const uint64_t at = payload_clock_ns();
        const Packet* found = nullptr;
        for (const Packet& p : b)
          if (is_message(p, seq) && !found) found = &p;
        if (found) return {std::move(b), found, at};
        continue;  // b released: nothing in it was awaited
      }
      // The clock every 16th empty poll: a poll is a syscall (~0.3 us), the timeout 1 s
      if (++empty % 16 == 0 && payload_clock_ns() >= deadline) return {};
    }
  }

  bool is_message(const Packet& p, uint64_t seq) noexcept {
    PayloadHeader h;
    const PayloadStatus st = verify_payload(p, &h, o_.verify);
    if (st != PayloadStatus::ok || p.size() != o_.size || h.stream != kStream) {
      ++r_.malformed;
      return false;
    }
    if (h.sequence != seq) {
      ++r_.late;
      return false;
    }
    return true;
  }

  TxQueue& a_tx_;
  RxQueue* b_rx_;
  TxQueue* b_tx_;
  RxQueue& a_rx_;
  const PingPongOptions& o_;
  PingPongResult& r_;
};

}  // namespace

double PingPongResult::median_of(const std::vector<uint64_t>& v) noexcept {
  if (v.empty()) return 0;
  const size_t n = v.size();
  return n % 2 ? double(v[n / 2]) : (double(v[n / 2 - 1]) + double(v[n / 2])) / 2;
}

uint64_t PingPongResult::percentile_of(const std::vector<uint64_t>& v, double p) noexcept {
  if (v.empty()) return 0;
  const auto rank = static_cast<size_t>(std::max(1.0, p / 100.0 * double(v.size()) + 0.5));
  return v[std::min(rank, v.size()) - 1];
}

double PingPongResult::mean_of(const std::vector<uint64_t>& v) noexcept {
  if (v.empty()) return 0;
  double sum = 0;
  for (uint64_t x : v) sum += double(x);
  return sum / double(v.size());
}

PingPongResult run_ping_pong(Session& session, const PingPongOptions& o, PingPongRole role) {
  PingPongResult r;
  PingPong(session, o, r, role != PingPongRole::client).run();
  r.stats = session.stats();
  return r;
}

}  // namespace netdaq::cli
