// UDP receive: one non-blocking socket per rx queue, every queue of an interface bound to
// the same address with SO_REUSEPORT (the kernel spreads flows over them by 4-tuple hash).
//
// Plain path: recvmmsg(MSG_DONTWAIT) straight into pool buffers, one iovec per segment
// (header-data split: the first buf_size bytes in segment 0, the rest in segment 1). A
// datagram bigger than the buffers comes back with MSG_TRUNC and is counted oversize.
//
// GRO path (socket.gro and a kernel with UDP_GRO): the kernel may hand over a
// super-datagram of several datagrams of one flow, all gso_size bytes but the last, with a
// UDP_GRO cmsg; it writes it across the message's iovecs as one run of bytes. So the
// buffers are offered in the shape the last call's super-datagrams had: each message gets
// as many buffers as they held datagrams, each buffer offered exactly gso_size bytes, and
// every datagram of a super-datagram of that size lands whole in a buffer of its own, with
// no copy. Without such a guess (no super-datagram last time) each message gets one buffer
// of full capacity, so a datagram that was not coalesced lands in place. After the buffers
// each message has one more iovec, into a 64 KiB staging area of its own: what does not
// fit the buffers (more datagrams than buffers, or a guess that missed, whose datagrams
// straddle buffers and are first made contiguous there) is copied from staging into pool
// buffers (counted in `copies`). When the burst is full before a super-datagram is
// delivered, the rest waits for the next receive() (the backlog), so nothing received is
// lost to a short burst.
//
// Pool empty: when not one buffer is free, the datagrams waiting in the socket are read
// into a scratch buffer and counted as pool_empty, so the counters say why data was lost
// and the socket does not fill up with stale data (a real-time stream wants the newest).
//
// Kernel drops: SO_RXQ_OVFL (the drop count carried on received datagrams) and SO_MEMINFO
// (read by refresh_counters from the stats thread) feed DropReason::kernel. With GRO the
// kernel counts a dropped super-datagram once, whatever it held: GroDropCounter (eBPF) says
// how many datagrams those were, and each batch is replaced by its datagrams. Where it is
// unavailable the queue's mode says that its kernel drops are batches, and why.
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/log.h"
#include "engines/socket/gro_drops.h"
#include "engines/socket/ports.h"
#include "engines/socket/socket_options.h"
#include "util/errno_text.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

namespace netdaq::detail::socket_engine {

void set_packet_length(PacketFields& f, uint32_t len) noexcept {
  if (f.nseg <= 1) {
    f.len[0] = len;
    return;
  }
  f.len[0] = std::min(len, f.cap[0]);
  f.len[1] = len - f.len[0];
}

void scatter_into(PacketFields& f, const std::byte* src, uint32_t len) noexcept {
  const uint32_t first = f.nseg <= 1 ? len : std::min(len, f.cap[0]);
  std::memcpy(f.data[0], src, first);
  f.len[0] = first;
  if (f.nseg > 1) {
    std::memcpy(f.data[1], src + first, len - first);
    f.len[1] = len - first;
  }
}

uint32_t packet_capacity(const QueueResources& q) noexcept {
  uint32_t c = 0;
  for (unsigned s = 0; s < q.segments; ++s) c += q.pools[s]->buf_size();
  return c;
}

namespace {

constexpr uint32_t kGroStaging = 65536;  // room for the part of a GRO datagram past the pool buffers
constexpr size_t kCtrlSize = 64;         // SO_RXQ_OVFL + UDP_GRO cmsgs, with room to spare

class UdpRx final : public RxPort {
 public:
  UdpRx(const QueueResources& q, UniqueFd fd, bool gro, std::shared_ptr<GroDropCounter> gro_drops,
        uint64_t cookie, std::string mode)
      : q_(q),
        fd_(std::move(fd)),
        gro_(gro),
        gro_drops_(std::move(gro_drops)),
        cookie_(cookie),
        mode_(std::move(mode)),
        slots_(std::max<uint32_t>(q.queue->batch_size, 1)),
        nseg_(q.segments),
        cap_total_(packet_capacity(q)),
        offer_cap_(gro ? std::max(slots_, std::min(kMaxOffered, q.pools[0]->capacity() / 2)) : slots_),
        slot_pkts_(offer_cap_),
        msgs_(slots_),
        msg_(slots_),
        iov_(size_t{offer_cap_} * q.segments + (gro ? slots_ : 0)),
        ctrl_(new std::byte[size_t{slots_} * kCtrlSize]()),
        discard_msgs_(slots_) {
    // Not zeroed: pages are only touched when a super-datagram does not land in place.
    if (gro_) staging_.reset(new std::byte[size_t{slots_} * kStaging]);
    discard_iov_ = {discard_buf_, sizeof(discard_buf_)};
    for (uint32_t i = 0; i < slots_; ++i) {
      msghdr& h = msgs_[i].msg_hdr;
      h.msg_control = ctrl_.get() + size_t{i} * kCtrlSize;
      h.msg_controllen = kCtrlSize;
      msghdr& d = discard_msgs_[i].msg_hdr;
      d.msg_iov = &discard_iov_;
      d.msg_iovlen = 1;
      d.msg_control = h.msg_control;
      d.msg_controllen = kCtrlSize;
    }
  }

  ~UdpRx() override {
    // Buffers of the backlog that were received but never delivered.
    for (uint32_t j = bl_next_; j < bl_count_; ++j) {
      const Message& m = msg_[j];
      const uint32_t from = j == bl_next_ ? std::min(bl_i_, m.held) : 0;
      if (from < m.held) return_buffers(q_, slot_pkts_.data() + m.first + from, m.held - from);
    }
    if (gro_drops_) gro_drops_->unwatch(cookie_);
  }

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    const uint32_t n = receive_packets(pkts, max);
    bytes += packet_bytes(pkts, n);  // a syscall per burst dominates; a second pass costs nothing
    return n;
  }

  uint32_t receive_packets(Packet* pkts, uint32_t max) noexcept {
    if (max > slots_) max = slots_;
    uint32_t out = 0;
    if (bl_next_ < bl_count_) {
      out = drain(pkts, 0, max);
      if (bl_next_ < bl_count_ || out == max) return out;
    }
    // Shaped by the last call's super-datagrams, buffers are offered for up to twice as many
    // messages as it received, beyond this burst (the backlog keeps what does not fit);
    // otherwise for this burst, one a message.
    const uint32_t per = gro_ && gso_guess_ > 0 ? segments_guess_ : 1;
    const uint32_t messages = std::min(slots_, 2 * last_messages_);
    const uint32_t want = per > 1 ? std::min(offer_cap_, messages * per) : max - out;
    const uint32_t got = attach_buffers(q_, slot_pkts_.data(), want);
    if (got == 0) {
      discard_when_pool_empty();
      return out;
    }
    const uint32_t used = lay_out_messages(got, per);
    const int r = ::recvmmsg(fd_.get(), msgs_.data(), used, MSG_DONTWAIT, nullptr);
    if (r <= 0) {
      return_buffers(q_, slot_pkts_.data(), got);
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        log_os_error(errlog_, q_.counters, q_.name, "recvmmsg failed", errno);
      return out;
    }
    const uint32_t n = static_cast<uint32_t>(r);
    last_messages_ = n;
    if (n < used) return_buffers(q_, slot_pkts_.data() + msg_[n].first, got - msg_[n].first);
    // The next call expects the segment size of this call's last super-datagram, and as many
    // datagrams a message as a datagram's message held on average (sum count^2 / sum count):
    // singles among super-datagrams then waste a few buffers, and only the datagrams of
    // bigger super-datagrams than that are copied.
    uint32_t next_gso = 0;
    uint64_t datagrams = 0, weighted = 0;
    for (uint32_t j = 0; j < n; ++j) {
      sort_out(j);
      const Message& m = msg_[j];
      datagrams += m.count;
      weighted += uint64_t{m.count} * m.count;
      if (m.count > 1 && m.size <= cap_total_) next_gso = m.size;
    }
    gso_guess_ = next_gso;
    segments_guess_ = datagrams ? static_cast<uint32_t>(std::min<uint64_t>((weighted + datagrams - 1) / datagrams, kMaxGroSegments)) : 1;
    bl_next_ = 0;
    bl_count_ = n;
    bl_i_ = 0;
    return drain(pkts, out, max);
  }

  void refresh_counters() noexcept override {
    uint64_t drops = ovfl_.load(std::memory_order_relaxed);
    // The batches first: one the eBPF program has counted is already in sk_drops, so the
    // sum below never runs ahead of the truth (the mirror may not go back).
    const GroDrops batched = gro_drops_ ? gro_drops_->read(cookie_) : GroDrops{};
    const int64_t mem = socket_drops(fd_.get());
    if (mem > 0 && static_cast<uint64_t>(mem) > drops) drops = static_cast<uint64_t>(mem);
    if (batched.batches <= drops) drops = drops - batched.batches + batched.datagrams;
    // Several stats readers may race here; never let the mirror go backwards.
    uint64_t seen = seen_drops_.load(std::memory_order_relaxed);
    while (drops > seen && !seen_drops_.compare_exchange_weak(seen, drops, std::memory_order_relaxed)) {
    }
    q_.counters->set_drop(DropReason::kernel, std::max(drops, seen));
  }

  void add_details(QueueStats& s) const override {
    s.mode = mode_;
    if (!gro_drops_) return;
    const GroDrops d = gro_drops_->read(cookie_);
    s.engine_counters = {{"gro_batches_dropped", d.batches}, {"gro_datagrams_dropped", d.datagrams}};
  }

  const QueueResources& resources() const noexcept override { return q_; }

 private:
  // One message of a recvmmsg: the buffers it was offered and what the kernel put there.
  struct Message {
    uint32_t first = 0;     // its buffers: slot_pkts_[first, first + buffers)
    uint32_t buffers = 0;
    uint32_t count = 0;     // datagrams in it (0: dropped, oversize)
    uint32_t size = 0;      // bytes of each datagram but the last
    uint32_t len = 0;       // bytes in all
    uint32_t in_place = 0;  // datagrams [0, in_place) lie whole in buffers [0, in_place)
    uint32_t held = 0;      // buffers [0, held) kept for its datagrams; the others went back
    const std::byte* staged = nullptr;  // datagram i >= in_place at staged + i * size - skip
    uint32_t skip = 0;
  };

  static constexpr uint32_t kMaxGroSegments = 128;  // UDP_GRO_CNT_MAX (64 before Linux 6.9): no more a super-datagram
  static constexpr uint32_t kMaxOffered = 4096;    // buffers offered to one recvmmsg at most (GRO)
  static constexpr size_t kStaging = 65536;  // more than a super-datagram's bytes (UDP's 64 KiB)

  std::byte* staging(uint32_t j) const noexcept { return staging_.get() + size_t{j} * kStaging; }
  static uint32_t length_of(const Message& m, uint32_t i) noexcept {
    return i + 1 < m.count ? m.size : m.len - i * m.size;
  }
  // Datagram i of m, not in place, copied from staging into buffer p; returns its bytes.
  static uint32_t copy_out(const Message& m, uint32_t i, Packet& p) noexcept {
    const uint32_t n = length_of(m, i);
    scatter_into(fields(p), m.staged + (size_t{i} * m.size - m.skip), n);
    return n;
  }

  // Gives the messages their iovecs over the got buffers, per buffers each (got <= slots_
  // x per); returns how many messages there are. Without a guess (per == 1) each message has
  // one buffer of full capacity. After super-datagrams of one segment size, each buffer is
  // offered exactly that size, so that the kernel writes every datagram into a buffer of its
  // own and none is copied. With GRO the last iovec of a message is its staging area: the
  // bytes that do not fit its buffers.
  uint32_t lay_out_messages(uint32_t got, uint32_t per) noexcept {
    stride_ = per > 1 ? gso_guess_ : cap_total_;
    iovec* v = iov_.data();
    uint32_t m = 0;
    for (uint32_t b = 0; b < got; ++m) {
      Message& msg = msg_[m];
      msg.first = b;
      msg.buffers = std::min(per, got - b);
      msghdr& h = msgs_[m].msg_hdr;
      h.msg_iov = v;
      for (uint32_t i = 0; i < msg.buffers; ++i) {
        const PacketFields& f = fields(slot_pkts_[b + i]);
        uint32_t left = stride_;
        for (unsigned s = 0; s < nseg_ && left > 0; ++s) {
          const uint32_t n = std::min(left, f.cap[s]);
          *v++ = {f.data[s], n};
          left -= n;
        }
      }
      if (gro_) *v++ = {staging(m), kStaging};
      h.msg_iovlen = static_cast<size_t>(v - h.msg_iov);
      h.msg_controllen = kCtrlSize;
      b += msg.buffers;
    }
    return m;
  }

  // What the kernel put into message j: its datagrams, which of them lie whole in their own
  // buffers and where the others are (their bytes made contiguous in staging when they
  // straddle buffers: a guess that missed). Buffers it does not need go back to the pool;
  // datagrams bigger than a buffer are counted oversize.
  void sort_out(uint32_t j) noexcept {
    Message& m = msg_[j];
    const uint32_t len = msgs_[j].msg_len;
    const uint32_t gso = parse_control(msgs_[j].msg_hdr);
    const bool single = gso == 0 || len <= gso;
    m.len = len;
    m.size = single ? len : gso;
    m.count = single ? 1 : (len + gso - 1) / gso;
    const uint32_t in_buffers = static_cast<uint32_t>(std::min<uint64_t>(len, uint64_t{m.buffers} * stride_));
    m.in_place = m.size == stride_ ? std::min(m.count, m.buffers) : m.size < stride_ ? 1 : 0;
    const uint32_t placed = m.in_place * m.size;  // bytes of the datagrams in place
    const bool straddle = placed < in_buffers;     // datagrams in the buffers, not in place
    if ((msgs_[j].msg_hdr.msg_flags & MSG_TRUNC) != 0 || m.size > cap_total_ ||
        len - (straddle ? placed : in_buffers) > kStaging) {  // each datagram of it is bigger than a buffer
      q_.counters->drop(DropReason::oversize, m.count);
      m.count = m.held = m.in_place = 0;
      return_buffers(q_, slot_pkts_.data() + m.first, m.buffers);
      return;
    }
    if (!gro_) {  // one datagram, in place
      m.held = 1;
      return;
    }
    // Staging holds bytes [in_buffers, len); when datagrams straddle buffers, bytes
    // [placed, in_buffers) are put in front of them, so that [placed, len) are contiguous.
    std::byte* st = staging(j);
    m.staged = st;
    m.skip = in_buffers;
    if (straddle) {
      std::memmove(st + (in_buffers - placed), st, len - in_buffers);
      gather(m, placed, in_buffers, st);
      m.skip = placed;
    }
    m.held = std::min(m.count, m.buffers);
    if (m.held < m.buffers) return_buffers(q_, slot_pkts_.data() + m.first + m.held, m.buffers - m.held);
  }

  // Copies bytes [from, to) of message m, which lie in its buffers (stride_ bytes each,
  // across the buffers' segments), to out (byte from at out[0]).
  void gather(const Message& m, uint32_t from, uint32_t to, std::byte* out) noexcept {
    for (uint32_t i = from / stride_; i < m.buffers && uint64_t{i} * stride_ < to; ++i) {
      const PacketFields& f = fields(slot_pkts_[m.first + i]);
      uint32_t base = i * stride_;
      const uint32_t end = std::min(to, base + stride_);
      for (unsigned s = 0; s < nseg_ && base < end; ++s) {
        const uint32_t seg_end = std::min(end, base + f.cap[s]);
        const uint32_t lo = std::max(from, base);
        if (lo < seg_end) std::memcpy(out + (lo - from), f.data[s] + (lo - base), seg_end - lo);
        base += f.cap[s];
      }
    }
  }

  // Delivers the backlog (messages [bl_next_, bl_count_) of the last recvmmsg, message
  // bl_next_ from its datagram bl_i_) into pkts[out, max). Returns the new out.
  uint32_t drain(Packet* pkts, uint32_t out, uint32_t max) noexcept {
    for (; bl_next_ < bl_count_; ++bl_next_, bl_i_ = 0) {
      const Message& m = msg_[bl_next_];
      Packet* own = slot_pkts_.data() + m.first;
      while (bl_i_ < m.in_place) {
        if (out == max) return out;
        set_packet_length(fields(own[bl_i_]), length_of(m, bl_i_));
        pkts[out++] = own[bl_i_++];
      }
      // The others, copied from their contiguous bytes: into the message's own buffers
      // first, then fresh ones.
      uint64_t copied = 0;
      for (; bl_i_ < m.held && out < max; ++bl_i_) {
        copied += copy_out(m, bl_i_, own[bl_i_]);
        pkts[out++] = own[bl_i_];
      }
      if (bl_i_ >= m.held && bl_i_ < m.count && out < max) {
        const uint32_t want = std::min(m.count - bl_i_, max - out);
        const uint32_t got = attach_buffers(q_, pkts + out, want);
        for (uint32_t k = 0; k < got; ++k, ++bl_i_) copied += copy_out(m, bl_i_, pkts[out + k]);
        out += got;
        if (got < want) {  // the pool ran dry: the rest of this super-datagram is lost
          q_.counters->drop(DropReason::pool_empty, m.count - bl_i_);
          bl_i_ = m.count;
        }
      }
      if (copied) QueueCounters::add(q_.counters->copies, copied);
      if (bl_i_ < m.count) return out;  // burst full; continue here next time
    }
    bl_next_ = bl_count_ = 0;
    return out;
  }

  // Reads the cmsgs of one received message: returns the GRO segment size (0 if the
  // message is a single datagram) and notes the kernel's drop count.
  uint32_t parse_control(msghdr& h) noexcept {
    uint32_t gso = 0;
    if (h.msg_controllen == 0) return 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
        int v = 0;
        std::memcpy(&v, CMSG_DATA(c), sizeof(v));
        gso = v > 0 ? static_cast<uint32_t>(v) : 0;
      } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        uint32_t d = 0;
        std::memcpy(&d, CMSG_DATA(c), sizeof(d));
        if (d > ovfl_.load(std::memory_order_relaxed)) ovfl_.store(d, std::memory_order_relaxed);
      }
    }
    return gso;
  }

  void discard_when_pool_empty() noexcept {
    for (uint32_t i = 0; i < slots_; ++i) discard_msgs_[i].msg_hdr.msg_controllen = kCtrlSize;
    const int r = ::recvmmsg(fd_.get(), discard_msgs_.data(), slots_, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (r <= 0) return;
    uint64_t lost = 0;
    for (int j = 0; j < r; ++j) {
      const uint32_t len = discard_msgs_[j].msg_len;  // the real length (MSG_TRUNC)
      const uint32_t gso = parse_control(discard_msgs_[j].msg_hdr);
      lost += gso && len > gso ? (len + gso - 1) / gso : 1;
    }
    q_.counters->drop(DropReason::pool_empty, lost);
  }

  QueueResources q_;
  UniqueFd fd_;
  const bool gro_;
  const std::shared_ptr<GroDropCounter> gro_drops_;  // null: no GRO, or drops counted per batch
  const uint64_t cookie_;
  const std::string mode_;
  const uint32_t slots_;
  const unsigned nseg_;
  const uint32_t cap_total_;
  const uint32_t offer_cap_;        // buffers one recvmmsg may be offered
  std::vector<Packet> slot_pkts_;   // buffers offered to one recvmmsg, message by message
  std::vector<mmsghdr> msgs_;
  std::vector<Message> msg_;        // what each message was offered and holds
  std::vector<iovec> iov_;          // each buffer's segments, then (GRO) staging, per message
  std::unique_ptr<std::byte[]> ctrl_;
  std::unique_ptr<std::byte[]> staging_;  // GRO: kStaging bytes per message
  // GRO: the segment size and count of the last call's super-datagrams (0: none came), which
  // the next call's buffers are offered in.
  uint32_t gso_guess_ = 0, segments_guess_ = 1, last_messages_ = 1;
  uint32_t stride_ = 0;  // bytes offered in each buffer of the last recvmmsg
  // Backlog: messages [bl_next_, bl_count_) not yet delivered; message bl_next_ continues
  // at its datagram bl_i_.
  uint32_t bl_next_ = 0, bl_count_ = 0, bl_i_ = 0;
  std::vector<mmsghdr> discard_msgs_;
  iovec discard_iov_{};
  std::byte discard_buf_[64];
  std::atomic<uint64_t> ovfl_{0};        // written by the receiving thread
  std::atomic<uint64_t> seen_drops_{0};  // written by stats readers
  RateLimitedLog errlog_;
};

// GRO's kernel drops per datagram where the eBPF counter loads; otherwise a warning (once
// per process) and a mode that says the kernel drops are batches. Returns the mode.
std::string watch_gro_drops(int fd, std::shared_ptr<GroDropCounter>& counter, uint64_t& cookie,
                            const std::string& context) {
  std::string why_not;
  counter = GroDropCounter::acquire(&why_not);
  if (counter && counter->watch(fd, &cookie, &why_not))
    return std::string("udp GRO, kernel drops counted per datagram (eBPF ") + counter->hook() + ")";
  counter.reset();
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    log()->warn("{}: with UDP GRO the kernel counts a dropped batch of up to 64 datagrams as one drop, and "
                "netdaq cannot count the datagrams in them: {}. Kernel drops are undercounted; set "
                "socket.gro: false for exact counts",
                context, why_not);
  return "udp GRO, kernel drops counted per batch of up to 64 datagrams (" + why_not + ")";
}

}  // namespace

std::unique_ptr<RxPort> open_udp_rx(const QueueResources& q, SockAddr& addr, const std::string& url,
                                    const std::string& context) {
  const SocketOptions& opt = q.iface->options.get<SocketOptions>();
  UniqueFd fd = open_socket(addr.family(), SOCK_DGRAM, IPPROTO_UDP, context);
  const int s = fd.get();
  set_int_or_throw(s, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT", context);
  const bool multicast = addr.is_multicast();
  if (multicast) set_int_or_throw(s, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR", context);
  set_buffer_size(s, true, opt.rcvbuf, context);
  if (const int err = set_int(s, SOL_SOCKET, SO_RXQ_OVFL, 1))
    log()->debug("{}: SO_RXQ_OVFL unavailable ({}); kernel drops come from SO_MEMINFO only", context,
                 errno_text(err));
  set_busy_poll(s, opt.busy_poll_us, context);
  bool gro = false;
  if (opt.gro) {
    if (const int err = set_int(s, SOL_UDP, UDP_GRO, 1))
      log()->debug("{}: UDP GRO not available on this kernel ({}); receiving datagram by datagram", context,
                   errno_text(err));
    else
      gro = true;
  }
  SockAddr bind_addr = addr;
  if (multicast && addr.family() == AF_INET6 && !opt.multicast_interface.empty()) {
    // Link-local scope groups (ff02::...) need the interface to bind.
    auto* sa6 = reinterpret_cast<sockaddr_in6*>(&bind_addr.ss);
    if (IN6_IS_ADDR_MC_LINKLOCAL(&sa6->sin6_addr) && sa6->sin6_scope_id == 0)
      sa6->sin6_scope_id = interface_index(opt.multicast_interface, context, "socket.multicast_interface");
  }
  if (multicast && !opt.multicast_interface.empty())  // a clear error before bind() reports a vaguer one
    interface_index(opt.multicast_interface, context, "socket.multicast_interface");
  bind_or_throw(s, bind_addr, url, context);
  if (multicast) join_multicast(s, addr, opt.multicast_interface, context);
  if (addr.port() == 0) addr.set_port(local_address(s).port());
  log()->debug("{}: receiving on {} (udp{}{})", context, local_address(s).to_string(), gro ? ", GRO" : "",
               multicast ? ", multicast" : "");
  std::shared_ptr<GroDropCounter> gro_drops;
  uint64_t cookie = 0;
  std::string mode = gro ? watch_gro_drops(s, gro_drops, cookie, context) : "udp";
  return std::make_unique<UdpRx>(q, std::move(fd), gro, std::move(gro_drops), cookie, std::move(mode));
}

}  // namespace netdaq::detail::socket_engine
