// `netdaq bench --ping-pong --role server`: B as its own process, as `sockperf server` runs.
// Busy polls bench-rx and sends every message back through bench-echo-tx at once, one copy,
// nothing allocated in the loop. The clock is read only when a poll comes back empty.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>

#include "bench_pingpong.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

// sockperf's message header (network byte order): sequence u64, flags u16, length u32.
constexpr size_t kSockperfHeader = 14;
constexpr std::byte kSockperfClient{1};       // set by the client, cleared in the reply
constexpr std::byte kSockperfPongRequest{2};  // the client waits for this message's reply

class Server {
 public:
  Server(Session& s, const std::function<Session&()>& open_echo, const PingPongServerOptions& o,
         PingPongServerResult& r)
      : rx_(s.rx_queue("bench-rx")), open_echo_(open_echo), o_(o), r_(r) {}

  Session* echo_session() const noexcept { return echo_; }

  void run() {
    const uint64_t start = payload_clock_ns();
    const uint64_t deadline = o_.duration_s > 0 ? start + static_cast<uint64_t>(o_.duration_s * 1e9) : 0;
    const uint64_t idle_ns = static_cast<uint64_t>(o_.idle_s * 1e9);
    uint64_t first = 0, last = 0;
    uint32_t empty = 0;
    while (!(o_.count && r_.echoed >= o_.count)) {
      if (RxBurst b = rx_.poll()) {
        for (const Packet& p : b) {
          ++r_.received;
          if (!well_formed(p)) {
            ++r_.malformed;
            continue;
          }
          if (echo(p)) ++r_.echoed;
          else ++r_.unsent;
          // The pattern bytes once the echo is out (the client checks what comes back too):
          // not in the round trip, as sockperf's server checks nothing
          if (o_.format == EchoFormat::netdaq && o_.verify && !pattern_ok(p)) ++r_.malformed;
        }
        last = payload_clock_ns();
        if (!first) first = last;
        continue;
      }
      if (++empty % 16) continue;  // the clock and the flag every 16th empty poll
      if (stop_requested()) {
        r_.interrupted = true;
        break;
      }
      const uint64_t now = payload_clock_ns();
      if (deadline && now >= deadline) break;
      if (idle_ns && last && now - last >= idle_ns) break;
    }
    r_.seconds = last > first ? double(last - first) / 1e9 : 0;
  }

 private:
  bool well_formed(const Packet& p) const noexcept {
    if (o_.format == EchoFormat::netdaq) {
      PayloadHeader h;
      return verify_payload(p, &h, false) == PayloadStatus::ok;  // the header: a netdaq message
    }
    // sockperf: a client's ping that asks for its pong, its length field the datagram's size
    std::byte h[kSockperfHeader];
    if (p.size() < kSockperfHeader || copy_out(p, h, kSockperfHeader) != kSockperfHeader) return false;
    const uint32_t len = (uint32_t(h[10]) << 24) | (uint32_t(h[11]) << 16) | (uint32_t(h[12]) << 8) | uint32_t(h[13]);
    const std::byte want = kSockperfClient | kSockperfPongRequest;
    return len == p.size() && (h[9] & want) == want;
  }

  static bool pattern_ok(const Packet& p) noexcept {
    PayloadHeader h;
    return verify_payload(p, &h, true) == PayloadStatus::ok;
  }

  static size_t copy_out(const Packet& p, std::byte* dst, size_t want) noexcept {
    size_t at = 0;
    for (unsigned s = 0; s < p.segments() && at < want; ++s) {
      const auto src = p.segment(s);
      const size_t n = std::min(src.size(), want - at);
      std::memcpy(dst + at, src.data(), n);
      at += n;
    }
    return at;
  }

  // The whole message back, as `sockperf server` sends it (its client flag cleared).
  bool echo(const Packet& in) noexcept {
    if (!tx_ && !open_way_back()) return false;
    const uint64_t give_up = payload_clock_ns() + o_.send_ns;
    TxBurst b;
    while (!(b = tx_->allocate(1)))
      if (payload_clock_ns() >= give_up) return false;
    Packet& p = b[0];
    const auto dst = p.buffer(0);
    if (in.size() > dst.size()) {  // larger than --size: not ours to echo
      b.release();
      return false;
    }
    copy_out(in, dst.data(), in.size());
    if (o_.format == EchoFormat::sockperf) dst[9] &= ~kSockperfClient;
    p.set_size(static_cast<uint32_t>(in.size()));
    while (!b.send()) {
      if (payload_clock_ns() >= give_up) {
        b.release();
        return false;
      }
    }
    return true;
  }

  // Once, at the first message (a setup error: every echo unsent, counted).
  bool open_way_back() noexcept {
    if (open_failed_) return false;
    try {
      echo_ = &open_echo_();
      tx_ = &echo_->tx_queue(kEchoTx);
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netdaq bench: ping-pong server: the way back: %s\n", e.what());
      open_failed_ = true;
      return false;
    }
  }

  RxQueue& rx_;
  const std::function<Session&()>& open_echo_;
  Session* echo_ = nullptr;
  TxQueue* tx_ = nullptr;
  bool open_failed_ = false;
  const PingPongServerOptions& o_;
  PingPongServerResult& r_;
};

}  // namespace

PingPongServerResult run_ping_pong_server(Session& rx_session, const std::function<Session&()>& open_echo,
                                          const PingPongServerOptions& o) {
  PingPongServerResult r;
  Server server(rx_session, open_echo, o, r);
  server.run();
  r.stats = rx_session.stats();
  if (Session* e = server.echo_session()) {
    const std::vector<QueueStats> more = e->stats();
    r.stats.insert(r.stats.end(), more.begin(), more.end());
  }
  return r;
}

}  // namespace netdaq::cli
