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
        shift_(std::has_single_bit(stride_) ? std::countr_zero(stride_) : -1),
        by_idx_(r.pool().capacity()) {
    rte_mempool_obj_iter(mp_, &RegionMbufs::index, this);
  }
  rte_mempool* mempool() const noexcept { return mp_; }
  rte_mbuf* mbuf(uint32_t idx) const noexcept { return by_idx_[idx]; }
  uint32_t idx(const rte_mbuf* m) const noexcept {
    const size_t off = static_cast<size_t>(static_cast<const std::byte*>(m->buf_addr) - base_);
    return static_cast<uint32_t>(shift_ >= 0 ? off >> shift_ : off / stride_);
  }

 private:
  static void index(rte_mempool*, void* self, void* obj, unsigned) {
    auto* s = static_cast<RegionMbufs*>(self);
    auto* m = static_cast<rte_mbuf*>(obj);
    s->by_idx_[s->idx(m)] = m;
  }
  rte_mempool* mp_;
  std::byte* base_;
  size_t stride_;
  int shift_;
  std::vector<rte_mbuf*> by_idx_;
};

class DpdkTx final : public TxPort {
 public:
  DpdkTx(const QueueResources& q, const PortContext& ctx, TxMbufs* mbufs, RegionMbufPool* region,
         const std::optional<Ipv4UdpHeaders>& headers)
      : q_(q), ctx_(ctx), mbufs_(mbufs), headers_(headers), head_(headers ? Ipv4UdpHeaders::kSize : 0), id_(q.queue->id),
        offload_(headers && ctx.device.tx_checksum() && !ctx.loopback),
        m_(std::max<uint32_t>(q.queue->batch_size, 64)) {
    if (region) region_.emplace(*region);
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
    const uint32_t cap = q.pools[0]->buf_size() - head_;
    for (uint32_t i = 0; i < n; ++i) {
      m[i]->data_off = 0;  // the frame starts at the buffer (the region's layout, as attached mbufs)
      auto& f = fields(pkts[i]);
      f.nseg = 1;
      f.flow = 0;
      f.has_immediate = 0;
      f.timestamp_ns = 0;
      f.buf[0] = region_->idx(m[i]);
      f.data[0] = static_cast<std::byte*>(m[i]->buf_addr) + head_;  // the payload, after the headers
      f.cap[0] = cap;
      f.len[0] = 0;
    }
    return n;
  }

  void free_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept override {
    if (!region_) return return_buffers(q, pkts, n);
    for (uint32_t done = 0; done < n;) {
      const uint32_t k = std::min<uint32_t>(n - done, static_cast<uint32_t>(m_.size()));
      for (uint32_t i = 0; i < k; ++i) m_[i] = region_->mbuf(fields(pkts[done + i]).buf[0]);
      rte_pktmbuf_free_bulk(m_.data(), k);
      done += k;
    }
  }

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    ensure_lcore();
    n = std::min<uint32_t>(n, static_cast<uint32_t>(m_.size()));
    rte_mbuf** m = m_.data();
    if (region_) {
      for (uint32_t i = 0; i < n; ++i) m[i] = region_->mbuf(fields(pkts[i]).buf[0]);
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
             (!headers_ ? ", raw frames" : offload_ ? ", checksum offload" : ", checksums by the CPU");
    s.engine_counters.emplace_back("mbufs_in_flight", region_ ? rte_mempool_in_use_count(region_->mempool())
                                                              : mbufs_->in_flight());
    s.engine_counters.emplace_back("tx_ring_full", full_.load(std::memory_order_relaxed));
    if (id_ == 0) ctx_.port_stats.add_details(s, false);
  }

  uint32_t headroom() const noexcept override { return head_; }

 private:
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
  std::atomic<uint64_t> full_{0};
};

}  // namespace

std::unique_ptr<TxPort> make_tx_port(const QueueResources& q, const PortContext& ctx, TxMbufs* mbufs,
                                     RegionMbufPool* region, const std::optional<Ipv4UdpHeaders>& headers) {
  return std::make_unique<DpdkTx>(q, ctx, mbufs, region, headers);
}

}  // namespace netdaq::detail::dpdk
