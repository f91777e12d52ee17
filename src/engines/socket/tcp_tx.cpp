// TCP send: a non-blocking client connection to tx.destination that reconnects every
// socket.reconnect_ms after a failure or a disconnect.
//
// Framing: each packet goes as a 4-byte big-endian length then its bytes (segments
// concatenated), written with one sendmsg (writev semantics, MSG_NOSIGNAL) per burst. The
// kernel may take part of a message: its rest moves into a small pending buffer (one
// message, allocated at open) that is flushed before anything else, so the stream never
// tears. A packet is accepted once it is entirely in the kernel or in that buffer; its pool
// buffer goes back at once.
//
// While not connected, transmit() accepts nothing (the caller keeps its packets and may
// retry or release them: tx_unsent). Connection failures and losses count in `errors` and
// are logged rate-limited; a message left half-written by a lost connection counts
// tx_error. Reconnecting reuses the same socket (connect(AF_UNSPEC) dissolves the old
// association), so no socket is created on the send path and the connection stays in the
// network namespace the queue was opened in.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "core/log.h"
#include "core/pacer.h"
#include "engines/socket/ports.h"
#include "engines/socket/socket_options.h"

namespace netdaq::detail::socket_engine {
namespace {

constexpr uint64_t kConnectTimeoutNs = 3'000'000'000;  // give up a SYN without answer
constexpr uint64_t kLivenessCheckNs = 1'000'000;       // look for a peer's FIN at most this often

class TcpTx final : public TxPort {
 public:
  TcpTx(const QueueResources& q, UniqueFd fd, const SockAddr& dest, std::string url)
      : q_(q),
        fd_(std::move(fd)),
        dest_(dest),
        url_(std::move(url)),
        lost_what_("connection to " + url_ + " lost"),
        connect_what_("cannot connect to " + url_ + " (retrying every " +
                      std::to_string(q.iface->options.get<SocketOptions>().reconnect_ms) + " ms)"),
        reconnect_ns_(uint64_t{q.iface->options.get<SocketOptions>().reconnect_ms} * 1'000'000),
        pend_cap_(4 + packet_capacity(q)),
        pending_(new std::byte[pend_cap_]),
        max_pkts_(std::min<uint32_t>(std::max<uint32_t>(q.queue->batch_size, 1), IOV_MAX / (1 + q.segments))),
        iov_(size_t{max_pkts_} * (1 + q.segments)),
        prefix_(max_pkts_) {
    start_connect(monotonic_ns());
  }

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    const uint64_t now = monotonic_ns();
    if (!connected(now)) return {};
    if (pend_off_ < pend_len_ && !flush_pending()) return {};
    if (n > max_pkts_) n = max_pkts_;
    if (n == 0) return {};
    size_t v = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const PacketFields& f = fields(pkts[i]);
      const uint32_t size = pkts[i].size();
      prefix_[i] = {std::byte(size >> 24), std::byte(size >> 16), std::byte(size >> 8), std::byte(size)};
      iov_[v++] = {prefix_[i].data(), 4};
      for (unsigned s = 0; s < f.nseg; ++s)
        if (f.len[s]) iov_[v++] = {f.data[s], f.len[s]};
    }
    msghdr h{};
    h.msg_iov = iov_.data();
    h.msg_iovlen = v;
    const ssize_t w = ::sendmsg(fd_.get(), &h, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w < 0) {
      const int err = errno;
      if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR && err != ENOBUFS) lost(now, err);
      return {};
    }
    // Whole messages written; the one cut in the middle goes to the pending buffer.
    uint64_t left = static_cast<uint64_t>(w);
    uint32_t accepted = 0;
    while (accepted < n && left >= 4 + uint64_t{pkts[accepted].size()}) left -= 4 + pkts[accepted++].size();
    if (left > 0 && accepted < n) keep_rest(pkts[accepted++], static_cast<uint32_t>(left));
    const TxResult r = TxResult::all_sent(pkts, accepted);  // the cut one is sent from the pending buffer
    return_buffers(q_, pkts, accepted);
    return r;
  }

 private:
  enum class State : uint8_t { idle, connecting, connected };

  bool connected(uint64_t now) noexcept {
    if (state_ == State::connected) {
      if (now - last_check_ns_ >= kLivenessCheckNs) {
        last_check_ns_ = now;
        // A server that went away has sent a FIN: notice it before writing into the void.
        // Anything the peer sends is read and ignored.
        char scratch[256];
        const ssize_t r = ::recv(fd_.get(), scratch, sizeof(scratch), MSG_DONTWAIT);
        if (r == 0) {
          lost(now, ECONNRESET);
          return false;
        }
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          lost(now, errno);
          return false;
        }
      }
      return true;
    }
    if (state_ == State::idle) {
      if (now < next_try_ns_) return false;
      start_connect(now);
      return state_ == State::connected;
    }
    // connecting: connect() again reports the outcome (0 or EISCONN: done).
    if (::connect(fd_.get(), dest_.get(), dest_.len) == 0 || errno == EISCONN) {
      established(now);
      return true;
    }
    const int err = errno;
    if (err == EALREADY || err == EINPROGRESS || err == EINTR) {
      if (now - connect_started_ns_ > kConnectTimeoutNs) failed(now, ETIMEDOUT);
      return false;
    }
    failed(now, err);
    return false;
  }

  void start_connect(uint64_t now) noexcept {
    sockaddr unspec{};
    unspec.sa_family = AF_UNSPEC;
    ::connect(fd_.get(), &unspec, sizeof(unspec));  // dissolve the previous connection, if any
    connect_started_ns_ = now;
    if (::connect(fd_.get(), dest_.get(), dest_.len) == 0) {
      established(now);
    } else if (errno == EINPROGRESS || errno == EALREADY) {
      state_ = State::connecting;
    } else {
      failed(now, errno);
    }
  }

  void established(uint64_t now) noexcept {
    state_ = State::connected;
    last_check_ns_ = now;
    QueueCounters::add(q_.counters->connections, 1);
    if (log()->should_log(spdlog::level::debug)) log()->debug("{}: connected to {}", q_.name, url_);
  }

  void failed(uint64_t now, int err) noexcept {
    state_ = State::idle;
    next_try_ns_ = now + reconnect_ns_;
    log_os_error(errlog_, q_.counters, q_.name, connect_what_.c_str(), err);
  }

  void lost(uint64_t now, int err) noexcept {
    if (pend_off_ < pend_len_) q_.counters->drop(DropReason::tx_error);  // half-written message
    pend_off_ = pend_len_ = 0;
    state_ = State::idle;
    next_try_ns_ = now + reconnect_ns_;
    log_os_error(errlog_, q_.counters, q_.name, lost_what_.c_str(), err);
  }

  // Copies bytes [written, end) of p's frame (length prefix + segments) to pending_.
  void keep_rest(Packet& p, uint32_t written) noexcept {
    const PacketFields& f = fields(p);
    const uint32_t size = p.size();
    const std::byte prefix[4] = {std::byte(size >> 24), std::byte(size >> 16), std::byte(size >> 8), std::byte(size)};
    uint32_t len = 0, pos = 0;  // pos: frame offset of the current piece
    auto piece = [&](const std::byte* data, uint32_t n) {
      if (written < pos + n) {
        const uint32_t from = written > pos ? written - pos : 0;
        std::memcpy(pending_.get() + len, data + from, n - from);
        len += n - from;
      }
      pos += n;
    };
    piece(prefix, 4);
    for (unsigned s = 0; s < f.nseg; ++s) piece(f.data[s], f.len[s]);
    pend_off_ = 0;
    pend_len_ = len;
    QueueCounters::add(q_.counters->copies, len);
  }

  bool flush_pending() noexcept {
    while (pend_off_ < pend_len_) {
      const ssize_t w = ::send(fd_.get(), pending_.get() + pend_off_, pend_len_ - pend_off_, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w > 0) {
        pend_off_ += static_cast<uint32_t>(w);
        continue;
      }
      const int err = errno;
      if (w < 0 && err == EINTR) continue;
      if (w < 0 && err != EAGAIN && err != EWOULDBLOCK && err != ENOBUFS) lost(monotonic_ns(), err);
      return false;
    }
    pend_off_ = pend_len_ = 0;
    return true;
  }

  QueueResources q_;
  UniqueFd fd_;
  const SockAddr dest_;
  const std::string url_;
  const std::string lost_what_;
  const std::string connect_what_;
  const uint64_t reconnect_ns_;
  State state_ = State::idle;
  uint64_t next_try_ns_ = 0;
  uint64_t connect_started_ns_ = 0;
  uint64_t last_check_ns_ = 0;
  const uint32_t pend_cap_;
  std::unique_ptr<std::byte[]> pending_;  // the unsent rest of one message
  uint32_t pend_off_ = 0, pend_len_ = 0;
  const uint32_t max_pkts_;
  std::vector<iovec> iov_;
  std::vector<std::array<std::byte, 4>> prefix_;  // big-endian length of each message
  RateLimitedLog errlog_;
};

}  // namespace

std::unique_ptr<TxPort> open_tcp_tx(const QueueResources& q, const SockAddr& dest, const std::string& url,
                                    const std::string& context) {
  const SocketOptions& opt = q.iface->options.get<SocketOptions>();
  UniqueFd fd = open_socket(dest.family(), SOCK_STREAM, IPPROTO_TCP, context);
  const int s = fd.get();
  set_int_or_throw(s, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY", context);  // bursts are batched already
  set_buffer_size(s, false, opt.sndbuf, context);
  auto port = std::make_unique<TcpTx>(q, std::move(fd), dest, url);
  log()->debug("{}: sending to {} (tcp, reconnect every {} ms)", context, dest.to_string(), opt.reconnect_ms);
  return port;
}

}  // namespace netdaq::detail::socket_engine
