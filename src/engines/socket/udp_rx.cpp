// UDP receive: one non-blocking socket per rx queue, every queue of an interface bound to
// the same address with SO_REUSEPORT (the kernel spreads flows over them by 4-tuple hash).
//
// Plain path: recvmmsg(MSG_DONTWAIT) straight into pool buffers, one iovec per segment
// (header-data split: the first buf_size bytes in segment 0, the rest in segment 1). A
// datagram bigger than the buffers comes back with MSG_TRUNC and is counted oversize.
//
// GRO path (socket.gro and a kernel with UDP_GRO): the kernel may hand over a
// super-datagram of several datagrams of one flow, all gso_size bytes but the last, with a
// UDP_GRO cmsg. Each message gets one more iovec after the pool buffers, pointing into a
// 64 KiB staging area of its own (allocated at open). A datagram that was not coalesced
// therefore still lands in the pool buffers without a copy; a coalesced one keeps its first
// segment in place and the others are copied from staging into fresh pool buffers (counted
// in `copies`). When the burst is full before a super-datagram is split, the rest waits in
// staging for the next receive() (the backlog), so nothing received is lost to a short burst.
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
        iov_per_slot_(q.segments + (gro ? 1 : 0)),
        cap_total_(packet_capacity(q)),
        slot_pkts_(slots_),
        msgs_(slots_),
        iov_(size_t{slots_} * iov_per_slot_),
        gso_(slots_),
        ctrl_(new std::byte[size_t{slots_} * kCtrlSize]()),
        discard_msgs_(slots_) {
    if (gro_) {
      staging_stride_ = (size_t{cap_total_} + kGroStaging + 63) & ~size_t{63};
      // Not zeroed: pages are only touched when a datagram overflows into them.
      staging_.reset(new std::byte[size_t{slots_} * staging_stride_]);
    }
    discard_iov_ = {discard_buf_, sizeof(discard_buf_)};
    for (uint32_t i = 0; i < slots_; ++i) {
      msghdr& h = msgs_[i].msg_hdr;
      h.msg_iov = &iov_[size_t{i} * iov_per_slot_];
      h.msg_iovlen = iov_per_slot_;
      h.msg_control = ctrl_.get() + size_t{i} * kCtrlSize;
      h.msg_controllen = kCtrlSize;
      if (gro_) h.msg_iov[nseg_] = {staging_.get() + size_t{i} * staging_stride_ + cap_total_, kGroStaging};
      msghdr& d = discard_msgs_[i].msg_hdr;
      d.msg_iov = &discard_iov_;
      d.msg_iovlen = 1;
      d.msg_control = h.msg_control;
      d.msg_controllen = kCtrlSize;
    }
  }

  ~UdpRx() override {
    // Datagrams of the backlog that were received but never delivered.
    uint32_t j = bl_next_ + (bl_off_ > 0 ? 1 : 0);
    if (j < bl_count_) return_buffers(q_, slot_pkts_.data() + j, bl_count_ - j);
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
    if (out == max) return out;
    const uint32_t got = attach_buffers(q_, slot_pkts_.data(), max - out);
    if (got == 0) {
      discard_when_pool_empty();
      return out;
    }
    for (uint32_t i = 0; i < got; ++i) {
      const PacketFields& f = fields(slot_pkts_[i]);
      iovec* v = msgs_[i].msg_hdr.msg_iov;
      for (unsigned s = 0; s < nseg_; ++s) v[s] = {f.data[s], f.cap[s]};
      msgs_[i].msg_hdr.msg_controllen = kCtrlSize;
    }
    const int r = ::recvmmsg(fd_.get(), msgs_.data(), got, MSG_DONTWAIT, nullptr);
    if (r <= 0) {
      return_buffers(q_, slot_pkts_.data(), got);
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        log_os_error(errlog_, q_.counters, q_.name, "recvmmsg failed", errno);
      return out;
    }
    const uint32_t n = static_cast<uint32_t>(r);
    if (n < got) return_buffers(q_, slot_pkts_.data() + n, got - n);
    for (uint32_t j = 0; j < n; ++j) gso_[j] = parse_control(msgs_[j].msg_hdr);
    bl_next_ = 0;
    bl_count_ = n;
    bl_off_ = 0;
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
  // Delivers the backlog (messages [bl_next_, bl_count_) of the last recvmmsg) into
  // pkts[out, max). Returns the new out.
  uint32_t drain(Packet* pkts, uint32_t out, uint32_t max) noexcept {
    while (bl_next_ < bl_count_) {
      if (out == max) return out;
      const uint32_t j = bl_next_;
      const uint32_t len = msgs_[j].msg_len;
      const uint32_t gso = gso_[j];
      if (bl_off_ == 0) {
        Packet& slot = slot_pkts_[j];
        const bool trunc = (msgs_[j].msg_hdr.msg_flags & MSG_TRUNC) != 0;
        if (gso == 0 || len <= gso) {  // one datagram, received in place
          if (trunc || len > cap_total_) {
            q_.counters->drop(DropReason::oversize);
            return_buffers(q_, &slot, 1);
          } else {
            set_packet_length(fields(slot), len);
            pkts[out++] = slot;
          }
          ++bl_next_;
          continue;
        }
        const uint32_t segments = (len + gso - 1) / gso;
        if (trunc || gso > cap_total_) {  // each datagram of it is bigger than a buffer
          q_.counters->drop(DropReason::oversize, segments);
          return_buffers(q_, &slot, 1);
          ++bl_next_;
          continue;
        }
        // Segment 1 stays in place. Bytes [gso, cap_total_) of the super-datagram are in the
        // pool buffers too: move them to staging, where the rest of it already is, so the
        // remaining segments are all read from one place (and survive a full burst).
        std::byte* st = staging_.get() + size_t{j} * staging_stride_;
        gather_tail(fields(slot), gso, std::min(len, cap_total_), st);
        set_packet_length(fields(slot), gso);
        pkts[out++] = slot;
        bl_off_ = gso;
        if (out == max) return out;
      }
      // Segments after the first, copied from staging into fresh buffers.
      const std::byte* st = staging_.get() + size_t{j} * staging_stride_;
      const uint32_t remaining = (len - bl_off_ + gso - 1) / gso;
      const uint32_t want = std::min(remaining, max - out);
      const uint32_t got = attach_buffers(q_, pkts + out, want);
      uint64_t copied = 0;
      for (uint32_t k = 0; k < got; ++k) {
        const uint32_t n = std::min(gso, len - bl_off_);
        scatter_into(fields(pkts[out + k]), st + bl_off_, n);
        bl_off_ += n;
        copied += n;
      }
      out += got;
      if (copied) QueueCounters::add(q_.counters->copies, copied);
      if (got < want) {  // the pool ran dry: the rest of this super-datagram is lost
        q_.counters->drop(DropReason::pool_empty, remaining - got);
        bl_off_ = len;
      }
      if (bl_off_ < len) return out;  // burst full; continue here next time
      ++bl_next_;
      bl_off_ = 0;
    }
    bl_next_ = bl_count_ = 0;
    return out;
  }

  // Copies datagram bytes [from, to) that were received into the pool buffers of f to the
  // same offsets of st.
  void gather_tail(const PacketFields& f, uint32_t from, uint32_t to, std::byte* st) const noexcept {
    uint32_t base = 0;
    for (unsigned s = 0; s < nseg_; ++s) {
      const uint32_t lo = std::max(from, base);
      const uint32_t hi = std::min(to, base + f.cap[s]);
      if (lo < hi) std::memcpy(st + lo, f.data[s] + (lo - base), hi - lo);
      base += f.cap[s];
    }
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
  const unsigned iov_per_slot_;
  const uint32_t cap_total_;
  std::vector<Packet> slot_pkts_;   // buffers of the messages of one recvmmsg
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;          // iov_per_slot_ per message
  std::vector<uint32_t> gso_;       // GRO segment size per message (0: single datagram)
  std::unique_ptr<std::byte[]> ctrl_;
  std::unique_ptr<std::byte[]> staging_;  // GRO: staging_stride_ bytes per message
  size_t staging_stride_ = 0;       // offset k of a slot's staging = byte k of its datagram
  // Backlog: messages [bl_next_, bl_count_) not yet delivered; bl_off_ > 0 means message
  // bl_next_ delivered its first segment and continues at that byte.
  uint32_t bl_next_ = 0, bl_count_ = 0, bl_off_ = 0;
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
