// TCP receive: a listening socket per rx queue (SO_REUSEPORT: several queues on one
// address share the incoming connections), any number of peers up to kMaxConnections.
//
// Framing: each message is a 4-byte big-endian length L, then L payload bytes; one
// message becomes one packet (header-data split: the first buf_size bytes in segment 0).
//
// The stream of each connection is read into a staging buffer of its own (allocated when
// the connection slot is first used, then reused; at least 64 KiB and one whole message)
// and complete messages are copied out into pool buffers (counted in `copies`). One epoll
// set per queue, polled with a zero timeout, tells which connections have data, so an idle
// poll costs one syscall whatever the number of peers.
//
// Limits and faults:
//  - a message longer than socket.tcp_max_message (0: the buf_size of the queue's payload
//    region, its last one) is skipped in the stream and counted oversize; the messages after
//    it arrive normally;
//  - a peer that closes (or resets) in the middle of a message: the partial message is
//    counted malformed and the connection closed; the listener keeps accepting;
//  - no free pool buffer: the message waits in staging and TCP flow control slows the
//    sender (nothing is dropped; TCP promised delivery).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "core/log.h"
#include "engines/socket/ports.h"
#include "engines/socket/socket_options.h"

namespace netdaq::detail::socket_engine {
namespace {

constexpr uint32_t kMaxConnections = 64;
constexpr uint32_t kListenTag = UINT32_MAX;
constexpr uint32_t kMinStaging = 64 * 1024;
constexpr int kMaxEvents = 32;
constexpr int kReadsPerEvent = 4;      // bounded work per connection per poll
constexpr uint32_t kRefill = 32;       // pool buffers taken at a time

uint32_t load_be32(const std::byte* p) noexcept {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

class TcpRx final : public RxPort {
 public:
  TcpRx(const QueueResources& q, UniqueFd listener, UniqueFd epoll, uint32_t limit)
      : q_(q),
        listen_(std::move(listener)),
        ep_(std::move(epoll)),
        limit_(limit),
        stage_size_(std::max<uint32_t>(kMinStaging, ((limit + 4 + 4095) / 4096) * 4096)),
        conns_(kMaxConnections) {}

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    const uint32_t n = receive_packets(pkts, max);
    bytes += packet_bytes(pkts, n);  // a syscall per burst dominates; a second pass costs nothing
    return n;
  }

  uint32_t receive_packets(Packet* pkts, uint32_t max) noexcept {
    Out o{pkts, 0, 0, max};
    if (max == 0) return 0;
    // Complete messages left in staging by an earlier call (full burst, empty pool).
    if (pending_) {
      for (uint32_t i = 0; i < kMaxConnections && o.out < o.max; ++i)
        if (conns_[i].fd && conns_[i].pending) service(conns_[i], o, false);
    }
    if (o.out < o.max) {
      const int n = ::epoll_wait(ep_.get(), events_, kMaxEvents, 0);
      for (int e = 0; e < n && o.out < o.max; ++e) {
        const uint32_t tag = events_[e].data.u32;
        if (tag == kListenTag)
          accept_new();
        else if (tag < kMaxConnections && conns_[tag].fd)
          service(conns_[tag], o, true);
      }
      if (n < 0 && errno != EINTR) log_os_error(errlog_, q_.counters, q_.name, "epoll_wait failed", errno);
    }
    if (o.reserved) return_buffers(q_, o.pkts + o.out, o.reserved);
    return o.out;
  }

  const QueueResources& resources() const noexcept override { return q_; }

 private:
  struct Conn {
    UniqueFd fd;                       // closed with the slot, or when the peer goes
    std::unique_ptr<std::byte[]> buf;  // stage_size_ bytes, kept for the slot's next peer
    uint32_t rd = 0, wr = 0;           // unread stream bytes are buf[rd, wr)
    uint32_t need = 4;                 // bytes from rd that the next step needs
    uint64_t skip = 0;                 // bytes of an oversize message still to discard
    bool eof = false;                  // the peer closed; deliver what is complete, then close
    bool pending = false;              // complete messages may be waiting in buf
  };
  // Output of one receive(): pkts[out, out + reserved) already carry pool buffers.
  struct Out {
    Packet* pkts;
    uint32_t out, reserved, max;
  };
  enum class Cut { need_more, full, no_buffers };

  void set_pending(Conn& c, bool p) noexcept {
    if (c.pending != p) {
      c.pending = p;
      pending_ += p ? 1 : -1;
    }
  }

  // Cuts complete messages out of c's staging, then (when allowed) reads more, a bounded
  // number of times.
  void service(Conn& c, Out& o, bool read) noexcept {
    for (int reads = 0;;) {
      const Cut cut = cut_messages(c, o);
      if (cut != Cut::need_more) {
        set_pending(c, true);
        return;
      }
      set_pending(c, false);
      if (c.eof) {
        finish(c);
        return;
      }
      if (!read || reads++ >= kReadsPerEvent) return;
      make_room(c);
      const ssize_t r = ::recv(c.fd.get(), c.buf.get() + c.wr, stage_size_ - c.wr, MSG_DONTWAIT);
      if (r > 0) {
        c.wr += static_cast<uint32_t>(r);
      } else if (r == 0) {
        c.eof = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return;
      } else if (errno != EINTR) {
        log_os_error(errlog_, q_.counters, q_.name, "receive from a TCP peer failed", errno);
        c.eof = true;
      }
    }
  }

  Cut cut_messages(Conn& c, Out& o) noexcept {
    uint64_t copied = 0;
    Cut result = Cut::need_more;
    for (;;) {
      if (c.skip) {
        const uint32_t take = static_cast<uint32_t>(std::min<uint64_t>(c.skip, c.wr - c.rd));
        c.rd += take;
        c.skip -= take;
        if (c.skip) break;
      }
      const uint32_t avail = c.wr - c.rd;
      if (avail < 4) {
        c.need = 4;
        break;
      }
      const uint32_t len = load_be32(c.buf.get() + c.rd);
      if (len > limit_) {  // skip it in the stream
        q_.counters->drop(DropReason::oversize);
        c.rd += 4;
        c.skip = len;
        continue;
      }
      if (avail - 4 < len) {
        c.need = 4 + len;
        break;
      }
      if (o.out == o.max) {
        result = Cut::full;
        break;
      }
      if (o.reserved == 0) {
        o.reserved = attach_buffers(q_, o.pkts + o.out, std::min(kRefill, o.max - o.out));
        if (o.reserved == 0) {
          result = Cut::no_buffers;
          break;
        }
      }
      scatter_into(fields(o.pkts[o.out]), c.buf.get() + c.rd + 4, len);
      ++o.out;
      --o.reserved;
      c.rd += 4 + len;
      copied += len;
    }
    if (c.rd == c.wr) c.rd = c.wr = 0;
    if (copied) QueueCounters::add(q_.counters->copies, copied);
    return result;
  }

  // Moves the unread bytes to the front when the next message would not fit behind them
  // (or little room is left), so a whole message always fits.
  void make_room(Conn& c) noexcept {
    if (c.rd == 0) return;
    if (stage_size_ - c.rd < c.need || stage_size_ - c.wr < stage_size_ / 4) {
      std::memmove(c.buf.get(), c.buf.get() + c.rd, c.wr - c.rd);
      c.wr -= c.rd;
      c.rd = 0;
    }
  }

  // The peer closed: a partial message left behind is malformed.
  void finish(Conn& c) noexcept {
    if (c.wr > c.rd) q_.counters->drop(DropReason::malformed);
    close_conn(c);
  }

  void close_conn(Conn& c) noexcept {
    ::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
    c.fd.reset();
    set_pending(c, false);
    c.rd = c.wr = 0;
    c.need = 4;
    c.skip = 0;
    c.eof = false;
  }

  void accept_new() noexcept {
    for (int k = 0; k < 16; ++k) {
      UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
          log_os_error(errlog_, q_.counters, q_.name, "accept failed", errno);
        return;
      }
      uint32_t slot = 0;
      while (slot < kMaxConnections && conns_[slot].fd) ++slot;
      if (slot == kMaxConnections) {
        log_os_error(errlog_, q_.counters, q_.name, "TCP connection refused: too many peers on this queue", EMFILE);
        continue;
      }
      Conn& c = conns_[slot];
      if (!c.buf) {  // once per slot, when a peer connects: not per message
        c.buf.reset(new (std::nothrow) std::byte[stage_size_]);
        if (!c.buf) {
          log_os_error(errlog_, q_.counters, q_.name, "no memory for a TCP connection's staging buffer", ENOMEM);
          continue;
        }
      }
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.u32 = slot;
      if (::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, fd.get(), &ev) != 0) {
        log_os_error(errlog_, q_.counters, q_.name, "epoll_ctl failed", errno);
        continue;
      }
      c.fd = std::move(fd);
      QueueCounters::add(q_.counters->connections, 1);
    }
  }

  QueueResources q_;
  UniqueFd listen_;
  UniqueFd ep_;
  const uint32_t limit_;
  const uint32_t stage_size_;
  std::vector<Conn> conns_;
  int pending_ = 0;  // connections with pending set
  epoll_event events_[kMaxEvents];
  RateLimitedLog errlog_;
};

}  // namespace

std::unique_ptr<RxPort> open_tcp_rx(const QueueResources& q, SockAddr& addr, const std::string& url,
                                    const std::string& context) {
  const SocketOptions& opt = q.iface->options.get<SocketOptions>();
  // Default: the buf_size of the payload region (the last one), as the validator assumes.
  // A larger explicit limit may use the header buffer too, up to a packet's capacity.
  const uint32_t capacity = packet_capacity(q);
  uint32_t limit = opt.tcp_max_message ? opt.tcp_max_message : q.pools[q.segments - 1]->buf_size();
  if (limit > capacity) {
    log()->warn("{}: socket.tcp_max_message {} is more than a packet holds ({} bytes); longer messages are counted "
                "oversize",
                context, opt.tcp_max_message, capacity);
    limit = capacity;
  }
  UniqueFd fd = open_socket(addr.family(), SOCK_STREAM, IPPROTO_TCP, context);
  const int s = fd.get();
  set_int_or_throw(s, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR", context);
  set_int_or_throw(s, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT", context);
  set_buffer_size(s, true, opt.rcvbuf, context);  // inherited by accepted connections
  set_busy_poll(s, opt.busy_poll_us, context);
  bind_or_throw(s, addr, url, context);
  if (::listen(s, 128) != 0) throw_os(Errc::system, context, "cannot listen on " + url, errno);
  if (addr.port() == 0) addr.set_port(local_address(s).port());

  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep) throw_os(Errc::resource, context, "epoll_create1", errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kListenTag;
  if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s, &ev) != 0) throw_os(Errc::system, context, "epoll_ctl", errno);
  log()->debug("{}: listening on {} (tcp, messages up to {} bytes)", context, local_address(s).to_string(), limit);
  return std::make_unique<TcpRx>(q, std::move(fd), std::move(ep), limit);
}

}  // namespace netdaq::detail::socket_engine
