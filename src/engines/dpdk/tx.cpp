#include <rte_ethdev.h>
#include <rte_ip.h>

#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "engines/dpdk/lcore.h"
#include "engines/dpdk/ports.h"

namespace netdaq::detail::dpdk {

namespace {

// The queue's region as a mempool (RegionMbufPool): buffer idx is the data room of one mbuf
// for good, so a burst costs what testpmd's txonly loop costs: one rte_pktmbuf_alloc_bulk,
// the headers from a template, one tx_burst, and the driver frees in bulk (no callback).
class RegionMbufs {
 public:
  explicit RegionMbufs(RegionMbufPool& r)
      : mp_(r.mempool()),
        base_(r.pool().address(0)),
        stride_(r.pool().stride()),
        shift_(std::has_single_bit(stride_) ? std::countr_zero(stride_) : -1) {
    rte_mempool_obj_iter(mp_, &RegionMbufs::make_direct, nullptr);
  }
  rte_mempool* mempool() const noexcept { return mp_; }
  uint32_t idx(const rte_mbuf* m) const noexcept {
    const size_t off = static_cast<size_t>(static_cast<const std::byte*>(m->buf_addr) - base_);
    return static_cast<uint32_t>(shift_ >= 0 ? off >> shift_ : off / stride_);
  }

 private:
  // The mempool makes pinned external-buffer mbufs (RTE_MBUF_F_EXTERNAL). Their buffer is
  // theirs for good, as a direct mbuf's data room is, so they are marked direct: freeing an
  // external one (the driver, per packet) also calls rte_pktmbuf_detach, reads the pool's
  // flags and the buffer's shared-info refcount: 15% of net_null's free loop, ~1 ns a packet
  // that testpmd's direct mbufs do not pay. Nothing sets the flag again (rte_pktmbuf_reset
  // keeps only EXTERNAL); buf_addr/buf_iova stay as the pool set them.
  static void make_direct(rte_mempool*, void*, void* obj, unsigned) {
    static_cast<rte_mbuf*>(obj)->ol_flags &= ~RTE_MBUF_F_EXTERNAL;
  }

  rte_mempool* mp_;
  std::byte* base_;
  size_t stride_;
  int shift_;
};

class DpdkTx final : public TxPort {
 public:
  DpdkTx(const QueueResources& q, const PortContext& ctx, TxMbufs* mbufs, RegionMbufPool* region,
         const std::optional<Ipv4UdpHeaders>& headers)
      : q_(q), ctx_(ctx), mbufs_(mbufs), headers_(headers), head_(headers ? Ipv4UdpHeaders::kSize : 0), id_(q.queue->id),
        offload_(headers && ctx.device.tx_checksum() && !ctx.loopback),
        m_(std::max<uint32_t>(q.queue->batch_size, 64)) {
    if (region) {
      region_.emplace(*region);
      stagger_mask_ = stagger_lines(q.pools[0]->buf_size(), ctx.device.port());
    }
  }

  uint32_t alloc_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept override {
    if (!region_) return attach_buffers(q, pkts, n);
    ensure_lcore();  // the mempool's per-lcore cache
    n = std::min<uint32_t>(n, static_cast<uint32_t>(m_.size()));
    rte_mbuf** m = m_.data();
    if (rte_pktmbuf_alloc_bulk(region_->mempool(), m, n) != 0) {
      // Low: ask the driver for the mbufs it has finished with, then take what there is.
      if (!ctx_.loopback) rte_eth_tx_done_cleanup(ctx_.device.port(), id_, 0);
      n = std::min<uint32_t>(n, rte_mempool_avail_count(region_->mempool()));
      if (n == 0 || rte_pktmbuf_alloc_bulk(region_->mempool(), m, n) != 0) return 0;
    }
    const uint32_t cap = q.pools[0]->buf_size() - stagger_mask_ * 64 - head_;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t idx = region_->idx(m[i]);
      const uint16_t off = static_cast<uint16_t>((idx & stagger_mask_) * 64);
      m[i]->data_off = off;
      // the payload, after the headers
      one_buffer_packet(pkts[i], idx, static_cast<std::byte*>(m[i]->buf_addr) + off + head_, cap);
      set_mbuf(fields(pkts[i]), m[i]);
    }
    return n;
  }

  void free_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept override {
    if (!region_) return return_buffers(q, pkts, n);
    for (uint32_t done = 0; done < n;) {
      const uint32_t k = std::min<uint32_t>(n - done, static_cast<uint32_t>(m_.size()));
      for (uint32_t i = 0; i < k; ++i) m_[i] = mbuf_of(fields(pkts[done + i]));
      rte_pktmbuf_free_bulk(m_.data(), k);
      done += k;
    }
  }

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    ensure_lcore();
    n = std::min<uint32_t>(n, static_cast<uint32_t>(m_.size()));
    rte_mbuf** m = m_.data();
    if (region_) {
      for (uint32_t i = 0; i < n; ++i) m[i] = mbuf_of(fields(pkts[i]));
    } else {
      if (!mbufs_->alloc(m, n)) {  // cannot happen with one header per buffer; counted if it does
        q_.counters->drop(DropReason::tx_full, n);
        return {};
      }
      for (uint32_t i = 0; i < n; ++i) mbufs_->attach(m[i], fields(pkts[i]).buf[0]);
    }
    // Per-burst choices, one loop each (no per-packet branch on them).
    uint64_t bytes = 0;
    if (!headers_) {
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t len = fields(pkts[i]).len[0];
        m[i]->data_len = m[i]->pkt_len = static_cast<uint16_t>(len);
        bytes += len;
      }
    } else if (!offload_) {
      // The headers of one payload size, checksum included, are worked out once and copied
      // (testpmd's template); a packet of another size works them out again.
      for (uint32_t i = 0; i < n; ++i) {
        const uint16_t len = static_cast<uint16_t>(fields(pkts[i]).len[0]);
        if (__builtin_expect(len != tmpl_len_, 0)) {
          headers_->write(tmpl_.data(), len);
          tmpl_len_ = len;
        }
        std::memcpy(rte_pktmbuf_mtod(m[i], std::byte*), tmpl_.data(), Ipv4UdpHeaders::kSize);
        m[i]->data_len = m[i]->pkt_len = static_cast<uint16_t>(head_ + len);
        bytes += len;
      }
    } else {
      for (uint32_t i = 0; i < n; ++i) {
        const uint16_t len = static_cast<uint16_t>(fields(pkts[i]).len[0]);
        auto* frame = rte_pktmbuf_mtod(m[i], std::byte*);
        headers_->write(frame, len);
        m[i]->data_len = m[i]->pkt_len = static_cast<uint16_t>(head_ + len);
        m[i]->l2_len = 14;
        m[i]->l3_len = 20;
        m[i]->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(frame + 14);
        ip->hdr_checksum = 0;
        auto* udp = reinterpret_cast<rte_udp_hdr*>(frame + 34);
        udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, m[i]->ol_flags);
        bytes += len;
      }
    }
    const uint32_t sent = ctx_.loopback
                              ? rte_ring_enqueue_burst(ctx_.loopback, reinterpret_cast<void**>(m), n, nullptr)
                              : rte_eth_tx_burst(ctx_.device.port(), id_, m, static_cast<uint16_t>(n));
    if (sent < n) {
      // Region mbufs stay with their packets (the caller retries or releases them).
      if (!region_) mbufs_->free_unsent(m + sent, n - sent);
      q_.counters->drop(DropReason::tx_full, n - sent);
      full_.store(full_.load(std::memory_order_relaxed) + (n - sent), std::memory_order_relaxed);
    }
    return sent == n ? TxResult{n, n, bytes} : TxResult::all_sent(pkts, sent);
  }

  // Drivers free sent mbufs lazily (when their descriptors are reused); when the pool runs
  // low, ask for the finished ones back (region mbufs: in alloc_buffers, when it runs dry).
  void poll_completions() noexcept override {
    if (region_) return;
    const BufferPool& pool = *q_.pools[0];
    if (!ctx_.loopback && pool.available() < pool.capacity() / 4) rte_eth_tx_done_cleanup(ctx_.device.port(), id_, 0);
  }

  void refresh_counters() noexcept override {
    ctx_.port_stats.refresh();
    // Region mbufs are counted by their mempool, not per packet.
    if (region_) q_.counters->pool_in_use.store(rte_mempool_in_use_count(region_->mempool()), std::memory_order_relaxed);
  }

  void add_details(QueueStats& s) const override {
    s.mode = "dpdk " + ctx_.device.driver() + " port " + std::to_string(ctx_.device.port()) + " queue " +
             std::to_string(id_) + (ctx_.loopback ? ", software loopback" : "") +
             (region_ ? ", region mempool" : ", attached mbufs") +
             (stagger_mask_ ? ", frames staggered over " + std::to_string(stagger_mask_ + 1) + " cache lines" : "") +
             (!headers_ ? ", raw frames" : offload_ ? ", checksum offload" : ", checksums by the CPU");
    s.engine_counters.emplace_back("mbufs_in_flight", region_ ? rte_mempool_in_use_count(region_->mempool())
                                                              : mbufs_->in_flight());
    s.engine_counters.emplace_back("tx_ring_full", full_.load(std::memory_order_relaxed));
    if (id_ == 0) ctx_.port_stats.add_details(s, false);
  }

  uint32_t headroom() const noexcept override { return head_; }

 private:
  // A region packet has one segment, so data[1] is free: it carries the packet's mbuf from
  // alloc_buffers to transmit (a load from the packet's own line, not a lookup by buffer
  // index in a table of 8 bytes per buffer, dependent on the first load).
  static void set_mbuf(PacketFields& f, rte_mbuf* m) noexcept { f.data[1] = reinterpret_cast<std::byte*>(m); }
  static rte_mbuf* mbuf_of(const PacketFields& f) noexcept { return reinterpret_cast<rte_mbuf*>(f.data[1]); }

  // Where a frame starts in its buffer: (idx & mask) cache lines in. A region's stride is
  // often a power of two (2048): every buffer's first line then maps to the same 2 of the L1's
  // 64 sets, and a burst of 64 frames (2 lines each) cannot stay in L1: the sender's and the
  // template's stores to them missed (perf: 24% of the sender loop, 25% of transmit at one
  // store; 0.90x -> ~1.0x testpmd at 66 B when the stride was 2112). testpmd's mbufs (header,
  // headroom, data: 35 lines) spread by themselves. The shift uses only the room a frame
  // cannot use (buf_size beyond the port's MTU + Ethernet and VLAN header), at most 7 lines;
  // the packets' capacity is the same for all: buf_size - 64 x mask - headers.
  static uint32_t stagger_lines(uint32_t buf_size, uint16_t port) noexcept {
    uint16_t mtu = 0;
    if (rte_eth_dev_get_mtu(port, &mtu) != 0 || mtu == 0) return 0;
    const uint32_t max_frame = uint32_t{mtu} + 18;
    if (buf_size <= max_frame) return 0;
    const uint32_t lines = std::min<uint32_t>(8, (buf_size - max_frame) / 64 + 1);
    return std::bit_floor(lines) - 1;
  }

  QueueResources q_;
  PortContext ctx_;
  TxMbufs* mbufs_;                          // attached mbufs (a shared region), or
  std::optional<RegionMbufs> region_;       // the region's own mempool
  std::optional<Ipv4UdpHeaders> headers_;  // nullopt: raw frames (dpdk.tx_raw_frames)
  uint32_t head_;                           // bytes the engine writes in front of the payload
  uint16_t id_;
  bool offload_;
  std::vector<rte_mbuf*> m_;
  std::array<std::byte, Ipv4UdpHeaders::kSize> tmpl_{};  // the headers for payloads of tmpl_len_ bytes
  uint32_t tmpl_len_ = ~0u;
  uint32_t stagger_mask_ = 0;  // frames start (buffer index & mask) cache lines in
  std::atomic<uint64_t> full_{0};
};

}  // namespace

std::unique_ptr<TxPort> make_tx_port(const QueueResources& q, const PortContext& ctx, TxMbufs* mbufs,
                                     RegionMbufPool* region, const std::optional<Ipv4UdpHeaders>& headers) {
  return std::make_unique<DpdkTx>(q, ctx, mbufs, region, headers);
}

}  // namespace netdaq::detail::dpdk
