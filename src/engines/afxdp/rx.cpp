// AF_XDP receive: the fill ring is kept topped up from the queue's pool; received frames are
// handed over in place, pointing at their UDP payload (the headers stay readable through
// Packet::frame()); released buffers go back to the pool and from there to the fill ring.
#include <sys/socket.h>

#include <atomic>
#include <cstring>

#include "engines/afxdp/bpf/steer_abi.h"
#include "engines/afxdp/ports.h"

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

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    refill();
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_cons__peek(xsk_->rx(), max, &idx);
    if (n == 0) {
      wake();
      return 0;
    }
    uint32_t out = 0;
    uint64_t nbytes = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const xdp_desc* d = xsk_ring_cons__rx_desc(xsk_->rx(), idx + i);
      const uint64_t start = d->addr & ~(chunk_ - 1);
      const auto buf = static_cast<uint32_t>(start / chunk_);
      std::byte* frame = base_ + d->addr;
      const UdpPayload u = find_udp_payload(frame, d->len);
      if (!u.ok) {  // the steering program only sends UDP: a frame no flow can match, as in
                    // every engine (flow_miss, engine counter non_udp_frames)
        pool_.free_bulk(&buf, 1);
        q_.counters->pool_in_use.fetch_sub(1, std::memory_order_relaxed);
        q_.counters->drop(DropReason::flow_miss);
        not_udp_.store(not_udp_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        continue;
      }
      PacketFields& f = fields(pkts[out++]);
      f.nseg = 1;
      f.data[0] = frame + u.offset;
      f.len[0] = u.size;
      nbytes += u.size;
      f.cap[0] = static_cast<uint32_t>(chunk_ - (d->addr - start) - u.offset);
      f.buf[0] = buf;
      f.l2_len = static_cast<uint16_t>(u.offset);
      f.flow = tagged_ ? flow_of(frame, d->addr - start) : only_flow_;
      f.timestamp_ns = 0;
    }
    xsk_ring_cons__release(xsk_->rx(), n);
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
                         {"wakeups", wakeups_.load(std::memory_order_relaxed)}};
  }

  const QueueResources& resources() const noexcept override { return q_; }

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
  QueueResources q_;
  std::shared_ptr<XskSocket> xsk_;
  const SteeringProgram& program_;
  BufferPool& pool_;
  std::byte* base_;
  uint64_t chunk_;
  bool tagged_;          // several flows on this queue: the program tags each packet
  uint32_t only_flow_;   // else the one flow's id (0 without flows)
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> not_udp_{0};  // written by the polling thread only
  std::atomic<uint64_t> seen_dropped_{0}, seen_ring_full_{0}, seen_wrong_queue_{0}, seen_invalid_{0};
};

}  // namespace

std::unique_ptr<RxPort> make_rx_port(const QueueResources& q, std::shared_ptr<XskSocket> xsk,
                                     const SteeringProgram& program) {
  return std::make_unique<AfxdpRx>(q, std::move(xsk), program);
}

}  // namespace netdaq::detail::afxdp
