// AF_XDP receive: the fill ring is kept topped up from the queue's pool; received frames are
// handed over in place, pointing at their UDP payload (the headers stay readable through
// Packet::frame()); released buffers go back to the pool and from there to the fill ring.
//
// Multi-buffer (XDP_USE_SG): a frame larger than one buffer comes as several descriptors,
// all but the last marked XDP_PKT_CONTD. A frame of two buffers becomes one Packet of two
// segments: segment 0 the UDP payload's part in the first buffer (l2_len header bytes in
// front of it, as for one buffer), segment 1 the rest of the payload at the start of the
// second buffer; buf[0], buf[1] their pool indices (return_buffers() frees both). A frame of more
// buffers than kMaxSegments is dropped, its buffers returned (oversize, oversize_frames).
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "engines/afxdp/bpf/steer_abi.h"
#include "engines/afxdp/ports.h"
#include "engines/afxdp/shared_ring.h"

namespace netdaq::detail::afxdp {

namespace {

class AfxdpRx final : public RxPort {
 public:
  AfxdpRx(const QueueResources& q, std::shared_ptr<XskSocket> xsk, const SteeringProgram& program)
      : q_(q),
        xsk_(std::move(xsk)),
        program_(program),
        pool_(*q.pools[0]),
        base_(pool_.address(0)),
        chunk_(pool_.stride()),
        tagged_(program.flows_of_queue(q.queue->id) > 1),
        only_flow_(program.only_flow(q.queue->id)) {
    refill();
  }

  ~AfxdpRx() override {
    release_handed_over(*xsk_->rx(), handed_rx_);
    release_handed_over(*xsk_->fill(), handed_fill_);
  }

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    if (__builtin_expect(handed_over_.load(std::memory_order_relaxed), 0)) return 0;  // another consumer owns the rings
    refill();
    uint32_t idx = 0;
    uint32_t n = xsk_ring_cons__peek(xsk_->rx(), max, &idx);
    if (n == 0) {
      wake();
      return 0;
    }
    // The kernel posts a frame's descriptors together, but `max` may have cut the last frame:
    // take the rest of it too (it yields one packet, and started within the first max).
    if (__builtin_expect(desc(idx + n - 1)->options & XDP_PKT_CONTD, 0)) n += peek_rest_of_frame();
    uint32_t out = 0;
    uint64_t nbytes = 0;
    uint32_t i = 0;
    for (; i < n; ++i) {
      const xdp_desc* d = desc(idx + i);
      if (__builtin_expect(d->options & XDP_PKT_CONTD, 0)) {
        uint32_t last = i + 1;  // the frame's last descriptor: the first without XDP_PKT_CONTD
        while (last < n && (desc(idx + last)->options & XDP_PKT_CONTD)) ++last;
        if (last == n) break;  // its end is not in the ring yet: left there for the next receive
        if (join(pkts[out], idx + i, last - i + 1, nbytes)) ++out;
        i = last;
        continue;
      }
      const auto buf = static_cast<uint32_t>(d->addr / chunk_);
      const UdpPayload u = find_udp_payload(base_ + d->addr, d->len);
      if (!u.ok) {  // the steering program only sends UDP: a frame no flow can match, as in
                    // every engine (flow_miss, engine counter non_udp_frames)
        drop_buffers(&buf, 1);
        not_udp();
        continue;
      }
      PacketFields& f = fields(pkts[out++]);
      f.nseg = 1;
      fill_first(f, d, u, u.size, buf);
      nbytes += u.size;
    }
    if (i < n) xsk_ring_cons__cancel(xsk_->rx(), n - i);  // an unfinished frame: peeked again next time
    xsk_ring_cons__release(xsk_->rx(), i);
    bytes += nbytes;
    return out;
  }

  void refresh_counters() noexcept override {
    const xdp_statistics s = xsk_->statistics();
    QueueCounters& c = *q_.counters;
    mirror_counter(seen_dropped_, s.rx_dropped, c, DropReason::pool_empty);
    mirror_counter(seen_ring_full_, s.rx_ring_full, c, DropReason::ring_full);
    mirror_counter(seen_wrong_queue_, program_.wrong_queue(q_.queue->id), c, DropReason::flow_miss);
    uint64_t old = seen_invalid_.exchange(s.rx_invalid_descs, std::memory_order_relaxed);
    if (s.rx_invalid_descs > old) c.errors.fetch_add(s.rx_invalid_descs - old, std::memory_order_relaxed);
  }

  void add_details(QueueStats& s) const override {
    s.mode = std::string("afxdp ") + (program_.native() ? "native" : "generic") + " XDP, " + xsk_->mode();
    const xdp_statistics x = xsk_->statistics();
    s.engine_counters = {{"xsk_rx_dropped", x.rx_dropped},
                         {"xsk_rx_ring_full", x.rx_ring_full},
                         {"xsk_fill_ring_empty", x.rx_fill_ring_empty_descs},
                         {"xsk_rx_invalid_descs", x.rx_invalid_descs},
                         {"flow_wrong_queue", seen_wrong_queue_.load(std::memory_order_relaxed)},  // read by refresh
                         {"non_udp_frames", not_udp_.load(std::memory_order_relaxed)},
                         {"multi_buffer_frames", multi_.load(std::memory_order_relaxed)},
                         {"oversize_frames", oversize_.load(std::memory_order_relaxed)},
                         {"wakeups", wakeups_.load(std::memory_order_relaxed)}};
  }

  const QueueResources& resources() const noexcept override { return q_; }

  bool hand_over_rings(HandedOverRings& r) noexcept override {
    handed_over_.store(true, std::memory_order_relaxed);
    r.rx = handed_rx_ = shared_ring(*xsk_->rx(), sizeof(xdp_desc));
    r.fill = handed_fill_ = shared_ring(*xsk_->fill(), sizeof(uint64_t));
    r.umem = base_;
    r.buffers = pool_.capacity();
    r.chunk = static_cast<uint32_t>(chunk_);
    r.umem_bytes = size_t{r.buffers} * chunk_;
    r.fd = xsk_->fd();
    r.need_wakeup = xsk_->need_wakeup();
    r.zero_copy = xsk_->zero_copy();
    r.multi_buffer = xsk_->multi_buffer();
    return true;
  }

 private:
  // Hands free pool buffers to the kernel until the fill ring is full or the pool is empty.
  void refill() noexcept {
    xsk_ring_prod* fill = xsk_->fill();
    uint32_t room = xsk_prod_nb_free(fill, xsk_->fill_size());
    while (room >= kRefillBatch || (room > 0 && room == xsk_->fill_size())) {
      uint32_t bufs[kRefillBatch];
      const uint32_t got = pool_.alloc_burst(bufs, std::min(room, kRefillBatch));
      if (got == 0) return;  // the kernel counts the packets it cannot place (pool_empty)
      uint32_t idx = 0;
      xsk_ring_prod__reserve(fill, got, &idx);
      for (uint32_t i = 0; i < got; ++i) *xsk_ring_prod__fill_addr(fill, idx + i) = uint64_t{bufs[i]} * chunk_;
      xsk_ring_prod__submit(fill, got);
      q_.counters->took(got);
      room -= got;
    }
  }

  const xdp_desc* desc(uint32_t i) noexcept { return xsk_ring_cons__rx_desc(xsk_->rx(), i); }

  static void bump(std::atomic<uint64_t>& c) noexcept {  // written by the polling thread only
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void not_udp() noexcept {
    q_.counters->drop(DropReason::flow_miss);
    bump(not_udp_);
  }
  // Buffers of a frame that is not handed over: straight back to the pool.
  void drop_buffers(const uint32_t* bufs, uint32_t n) noexcept {
    pool_.free_bulk(bufs, n);
    q_.counters->pool_in_use.fetch_sub(n, std::memory_order_relaxed);
  }

  // Peeks, one at a time, the descriptors that follow the batch up to the end of the frame
  // the batch's end cut (they follow the batch's in the ring); returns how many it peeked:
  // all of them, or fewer if the end is not there (receive() then leaves the frame).
  uint32_t peek_rest_of_frame() noexcept {
    uint32_t got = 0;
    for (uint32_t k = 0; k < kMaxFrameDescs; ++k) {
      uint32_t at = 0;
      if (xsk_ring_cons__peek(xsk_->rx(), 1, &at) != 1) break;
      ++got;
      if (!(desc(at)->options & XDP_PKT_CONTD)) break;
    }
    return got;
  }

  // The frame of descriptors first..first+ndesc-1: into p (returns true) when it has two
  // buffers and is UDP; otherwise its buffers go back to the pool and it is counted.
  bool join(Packet& p, uint32_t first, uint32_t ndesc, uint64_t& nbytes) noexcept {
    uint32_t bufs[kMaxFrameDescs];
    if (ndesc > kMaxSegments) {  // beyond what a Packet holds
      for (uint32_t done = 0; done < ndesc;) {
        const uint32_t m = std::min(ndesc - done, kMaxFrameDescs);
        for (uint32_t k = 0; k < m; ++k) bufs[k] = static_cast<uint32_t>(desc(first + done + k)->addr / chunk_);
        drop_buffers(bufs, m);
        done += m;
      }
      q_.counters->drop(DropReason::oversize);
      bump(oversize_);
      return false;
    }
    for (uint32_t k = 0; k < 2; ++k) bufs[k] = static_cast<uint32_t>(desc(first + k)->addr / chunk_);
    const xdp_desc* d0 = desc(first);
    const xdp_desc* d1 = desc(first + 1);
    // The headers are in the first buffer (the kernel fills it before the next); the UDP
    // length may reach into the second.
    const UdpPayload u = find_udp_payload(base_ + d0->addr, d0->len + d1->len);
    if (!u.ok || u.offset > d0->len) {
      drop_buffers(bufs, 2);
      not_udp();
      return false;
    }
    const uint32_t len0 = std::min(u.size, d0->len - u.offset);
    PacketFields& f = fields(p);
    fill_first(f, d0, u, len0, bufs[0]);
    if (len0 < u.size) {
      f.nseg = 2;
      f.data[1] = base_ + d1->addr;
      f.len[1] = u.size - len0;
      f.cap[1] = static_cast<uint32_t>(chunk_ - (d1->addr & (chunk_ - 1)));
      f.buf[1] = bufs[1];
      bump(multi_);
    } else {  // the payload ends in the first buffer (the second holds padding): one segment
      f.nseg = 1;
      drop_buffers(&bufs[1], 1);
    }
    nbytes += u.size;
    return true;
  }

  // Segment 0 of f: the UDP payload's first len0 bytes, its headers in front of it in the
  // buffer of d (the frame's first descriptor); the frame's flow from its XDP metadata.
  void fill_first(PacketFields& f, const xdp_desc* d, const UdpPayload& u, uint32_t len0, uint32_t buf) noexcept {
    const uint64_t headroom = d->addr & (chunk_ - 1);
    std::byte* frame = base_ + d->addr;
    f.data[0] = frame + u.offset;
    f.len[0] = len0;
    f.cap[0] = static_cast<uint32_t>(chunk_ - headroom - u.offset);
    f.buf[0] = buf;
    f.l2_len = static_cast<uint16_t>(u.offset);
    f.flow = tagged_ ? flow_of(frame, headroom) : only_flow_;
    f.timestamp_ns = 0;
  }

  // An empty RX ring: drive the kernel when it asked for it (need_wakeup) or when busy polling.
  void wake() noexcept {
    if (xsk_->busy_poll() || (xsk_->need_wakeup() && xsk_ring_prod__needs_wakeup(xsk_->fill()))) {
      recvfrom(xsk_->fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
      wakeups_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // The flow id the steering program wrote in front of the frame (XDP metadata), if any.
  uint32_t flow_of(std::byte* frame, uint64_t headroom) noexcept {
    if (headroom < sizeof(ndq_meta)) return 0;
    ndq_meta m;
    std::memcpy(&m, frame - sizeof m, sizeof m);
    if (m.magic != NDQ_META_MAGIC) return 0;
    const uint32_t stale = 0;  // the buffer is reused: don't let an old tag pass for a new one
    std::memcpy(frame - sizeof m + offsetof(ndq_meta, magic), &stale, sizeof stale);
    return m.flow;
  }

  static constexpr uint32_t kRefillBatch = 64;
  // Descriptors of one frame the kernel can post: MAX_SKB_FRAGS + 1 (17 with 4 KiB pages).
  static constexpr uint32_t kMaxFrameDescs = 32;
  QueueResources q_;
  std::shared_ptr<XskSocket> xsk_;
  const SteeringProgram& program_;
  BufferPool& pool_;
  std::byte* base_;
  uint64_t chunk_;
  bool tagged_;          // several flows on this queue: the program tags each packet
  uint32_t only_flow_;   // else the one flow's id (0 without flows)
  std::atomic<bool> handed_over_{false};
  SharedRing handed_rx_, handed_fill_;  // as handed over (their addresses shared with the new owner)
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> not_udp_{0};  // written by the polling thread only
  std::atomic<uint64_t> multi_{0};    // frames of two buffers handed over (ditto)
  std::atomic<uint64_t> oversize_{0};  // frames of more buffers than a Packet's segments (ditto)
  std::atomic<uint64_t> seen_dropped_{0}, seen_ring_full_{0}, seen_wrong_queue_{0}, seen_invalid_{0};
};

}  // namespace

std::unique_ptr<RxPort> make_rx_port(const QueueResources& q, std::shared_ptr<XskSocket> xsk,
                                     const SteeringProgram& program) {
  return std::make_unique<AfxdpRx>(q, std::move(xsk), program);
}

}  // namespace netdaq::detail::afxdp
