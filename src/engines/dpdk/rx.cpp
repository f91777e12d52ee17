#include <rte_ethdev.h>

#include <bit>
#include <vector>

#include "engines/dpdk/lcore.h"
#include "engines/dpdk/ports.h"

namespace netdaq::detail::dpdk {

namespace {

class DpdkRx final : public RxPort {
 public:
  DpdkRx(const QueueResources& q, const PortContext& ctx, FlowState& flows, const RegionMbufPool& pool)
      : q_(q), ctx_(ctx), flows_(flows), pool_(pool), id_(q.queue->id), split_(q.segments == 2 && !ctx.loopback),
        raw_(q.iface->options.get<DpdkOptions>().raw_frames),
        fast_free_(!split_ && !ctx.loopback && pool.in_region()),
        worker_(q.queue->mode == PollMode::worker),
        batch_(q.queue->batch_size),
        dropped_(q.queue->batch_size),
        base_(pool.pool().address(0)) {
    const size_t stride = pool.pool().stride();
    if (std::has_single_bit(stride)) shift_ = std::countr_zero(stride);
  }

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    ensure_lcore();
    if (worker_ && !worker_thread_.load(std::memory_order_relaxed))
      worker_thread_.store(this_thread_tag(), std::memory_order_relaxed);
    max = std::min<uint32_t>(max, batch_);
    rte_mbuf** m = mbufs_of(pkts);
    const uint32_t n = ctx_.loopback ? rte_ring_dequeue_burst(ctx_.loopback, reinterpret_cast<void**>(m), max, nullptr)
                                     : rte_eth_rx_burst(ctx_.device.port(), id_, m, static_cast<uint16_t>(max));
    if (n == 0) return 0;
    if (raw_) return hand_over_frames(pkts, m, n, bytes);
    const FlowTable* table = flows_.current();
    uint32_t out = 0, ndrop = 0, not_udp = 0, flow_miss = 0;
    uint64_t nbytes = 0;
    for (uint32_t i = 0; i < n; ++i) {
      rte_mbuf* mb = m[i];
      auto* frame = rte_pktmbuf_mtod(mb, std::byte*);
      // Split: the headers are in the first segment; its buffer holds >= 128 bytes, more than
      // the parser ever reads, and the payload offset is checked against the segment below.
      const UdpPayload u = find_udp_payload(frame, split_ ? mb->pkt_len : mb->data_len);
      const bool shape_ok = split_ ? (mb->nb_segs == 2 && u.offset <= mb->data_len) : mb->nb_segs == 1;
      if (!u.ok || !shape_ok) {
        ++not_udp;
        dropped_[ndrop++] = mb;
        continue;
      }
      uint32_t flow = 0;
      if (!table->matcher.empty()) {
        const int k = table->matcher.match(u);
        FlowSlot* slot = k < 0 ? &flows_.unmatched(id_) : &table->slots[static_cast<size_t>(k)][id_];
        if (k < 0 || !table->matcher.rules()[static_cast<size_t>(k)].delivers_to(id_)) {
          slot->add(k < 0 ? slot->packets : slot->wrong_queue, 1);
          if (k < 0) slot->add(slot->bytes, u.size);
          ++flow_miss;
          dropped_[ndrop++] = mb;
          continue;
        }
        slot->add(slot->packets, 1);
        slot->add(slot->bytes, u.size);
        flow = table->matcher.rules()[static_cast<size_t>(k)].id;
      }
      m[out] = mb;  // slot out's mbuf (out <= i: the burst is compacted in place)
      auto& f = fields(pkts[out++]);
      f.nseg = split_ ? 2 : 1;
      f.data[0] = frame + u.offset;
      f.l2_len = static_cast<uint16_t>(u.offset);
      f.whole_frame = 0;
      f.buf[0] = index_of(mb);
      f.flow = flow;
      f.timestamp_ns = 0;
      if (split_) {
        f.len[0] = f.cap[0] = mb->data_len - u.offset;
        rte_mbuf* pay = mb->next;
        f.data[1] = rte_pktmbuf_mtod(pay, std::byte*);
        f.len[1] = f.cap[1] = std::min<uint32_t>(pay->data_len, u.size - f.len[0]);
        f.buf[1] = 0;
        nbytes += f.len[0] + f.len[1];
      } else {
        f.len[0] = f.cap[0] = u.size;
        nbytes += u.size;
      }
    }
    bytes += nbytes;
    if (ndrop) {
      rte_pktmbuf_free_bulk(dropped_.data(), ndrop);
      if (not_udp) {
        q_.counters->drop(DropReason::flow_miss, not_udp);
        not_udp_.store(not_udp_.load(std::memory_order_relaxed) + not_udp, std::memory_order_relaxed);
      }
      if (flow_miss) q_.counters->drop(DropReason::flow_miss, flow_miss);
    }
    if (out) q_.counters->took(out);
    return out;
  }

  // Every slot's mbuf lives in a parallel array (slot_mbufs_), written by the receive itself:
  // release gives them back to the mempool as they are, without a pass over the packets.
  // raw_frames: the fields that are the same for every frame, once per packet slot.
  void prepare(Packet* pkts, size_t n) noexcept override {
    slots_ = pkts;
    slot_mbufs_.assign(n, nullptr);
    if (!raw_) return;
    for (size_t i = 0; i < n; ++i) {
      auto& f = fields(pkts[i]);
      f = PacketFields{};
      f.nseg = 1;
      f.whole_frame = 1;
    }
  }

  // raw_frames: every frame as it is (segment 0 = the frame from its Ethernet header); the
  // rest of the fields were set by prepare().
  uint32_t hand_over_frames(Packet* pkts, rte_mbuf* const* m, uint32_t n, uint64_t& bytes) noexcept {
    uint64_t nbytes = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const rte_mbuf* mb = m[i];
      auto& f = fields(pkts[i]);
      f.data[0] = rte_pktmbuf_mtod(mb, std::byte*);
      f.len[0] = f.cap[0] = mb->data_len;
      nbytes += mb->data_len;
      f.buf[0] = index_of(mb);
    }
    bytes += nbytes;
    q_.counters->took(n);
    return n;
  }

  void release(Packet* pkts, uint32_t n) noexcept override {
    // Called on the thread that received the mbufs (in worker mode the worker frees what the
    // application returned), so they go back into that lcore's mempool cache.
    ensure_lcore();
    rte_mbuf** m = mbufs_of(pkts);
    rte_mempool* mp = pool_.mempool();
    bool plain = fast_free_;
    if (plain) {
      // One segment from this queue's pool, refcnt 1 (the application cannot take
      // references): straight back into the mempool, as rte_pktmbuf_free would after its
      // per-mbuf checks (which read the pinned external buffer's shared info, a cache line
      // of its own per mbuf). Anything else takes the general path.
      for (uint32_t i = 0; i < n; ++i) {
        const bool one = m[i]->nb_segs == 1 && m[i]->pool == mp;
        if (__builtin_expect(one, 1)) m[i]->ol_flags = RTE_MBUF_F_EXTERNAL;  // as rte_pktmbuf_free leaves a pinned external buffer
        plain &= one;
      }
    }
    if (__builtin_expect(plain, 1))
      rte_mempool_put_bulk(mp, reinterpret_cast<void**>(m), n);
    else
      rte_pktmbuf_free_bulk(m, n);
    // The worker counts on its own line; any other thread (the application, after the worker
    // stopped) with a locked instruction.
    if (worker_ && worker_thread_.load(std::memory_order_relaxed) == this_thread_tag())
      q_.counters->put_back_local(n);
    else
      q_.counters->pool_in_use.fetch_sub(n, std::memory_order_release);
  }

  void refresh_counters() noexcept override { ctx_.port_stats.refresh(); }

  void add_details(QueueStats& s) const override {
    s.mode = "dpdk " + ctx_.device.driver() + " port " + std::to_string(ctx_.device.port()) + " queue " +
             std::to_string(id_) + (ctx_.loopback ? ", software loopback" : "") + (split_ ? ", header-data split" : "") +
             (raw_ ? ", raw frames" : "");
    s.engine_counters.emplace_back("mbufs_in_use", pool_.in_use());
    s.engine_counters.emplace_back("non_udp_frames", not_udp_.load(std::memory_order_relaxed));
    if (id_ == 0) ctx_.port_stats.add_details(s, true);
  }

  const QueueResources& resources() const noexcept override { return q_; }

 private:
  rte_mbuf** mbufs_of(const Packet* pkts) noexcept { return slot_mbufs_.data() + (pkts - slots_); }

  // The pool buffer an mbuf's data lives in (a shift for power-of-two strides, not a division).
  uint32_t index_of(const rte_mbuf* mb) const noexcept {
    const auto off = static_cast<size_t>(static_cast<const std::byte*>(mb->buf_addr) - base_);
    return static_cast<uint32_t>(shift_ >= 0 ? off >> shift_ : off / pool_.pool().stride());
  }

  QueueResources q_;
  PortContext ctx_;
  FlowState& flows_;
  const RegionMbufPool& pool_;
  uint16_t id_;
  bool split_;
  bool raw_;
  bool fast_free_;  // release: mbufs (pinned external buffers in the region) straight back to the pool
  const bool worker_;  // worker mode: one thread receives, and frees what it handed over
  std::atomic<const void*> worker_thread_{nullptr};  // worker mode: which thread that is
  uint32_t batch_;
  const Packet* slots_ = nullptr;         // the queue's packet slots (prepare)
  std::vector<rte_mbuf*> slot_mbufs_;     // the mbuf of each slot
  std::vector<rte_mbuf*> dropped_;
  const std::byte* base_;
  int shift_ = -1;
  std::atomic<uint64_t> not_udp_{0};
};

}  // namespace

std::unique_ptr<RxPort> make_rx_port(const QueueResources& q, const PortContext& ctx, FlowState& flows,
                                     const RegionMbufPool& pool) {
  return std::make_unique<DpdkRx>(q, ctx, flows, pool);
}

}  // namespace netdaq::detail::dpdk
