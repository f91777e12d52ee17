#include <rte_ethdev.h>
#include <rte_ip.h>

#include <vector>

#include "engines/dpdk/lcore.h"
#include "engines/dpdk/ports.h"

namespace netdaq::detail::dpdk {

namespace {

class DpdkTx final : public TxPort {
 public:
  DpdkTx(const QueueResources& q, const PortContext& ctx, TxMbufs& mbufs, const std::optional<Ipv4UdpHeaders>& headers)
      : q_(q), ctx_(ctx), mbufs_(mbufs), headers_(headers), head_(headers ? Ipv4UdpHeaders::kSize : 0), id_(q.queue->id),
        offload_(headers && ctx.device.tx_checksum() && !ctx.loopback),
        m_(std::max<uint32_t>(q.queue->batch_size, 64)) {}

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    ensure_lcore();
    n = std::min<uint32_t>(n, static_cast<uint32_t>(m_.size()));
    rte_mbuf** m = m_.data();
    if (!mbufs_.alloc(m, n)) {  // cannot happen with one header per buffer; counted if it does
      q_.counters->drop(DropReason::tx_full, n);
      return {};
    }
    for (uint32_t i = 0; i < n; ++i) {
      auto& f = fields(pkts[i]);
      mbufs_.attach(m[i], f.buf[0]);
      auto* frame = reinterpret_cast<std::byte*>(m[i]->buf_addr);
      if (headers_) headers_->write(frame, static_cast<uint16_t>(f.len[0]));
      m[i]->data_len = static_cast<uint16_t>(head_ + f.len[0]);
      m[i]->pkt_len = m[i]->data_len;
      if (offload_) {
        m[i]->l2_len = 14;
        m[i]->l3_len = 20;
        m[i]->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(frame + 14);
        ip->hdr_checksum = 0;
        auto* udp = reinterpret_cast<rte_udp_hdr*>(frame + 34);
        udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, m[i]->ol_flags);
      }
    }
    const uint32_t sent = ctx_.loopback
                              ? rte_ring_enqueue_burst(ctx_.loopback, reinterpret_cast<void**>(m), n, nullptr)
                              : rte_eth_tx_burst(ctx_.device.port(), id_, m, static_cast<uint16_t>(n));
    if (sent < n) {
      mbufs_.free_unsent(m + sent, n - sent);
      q_.counters->drop(DropReason::tx_full, n - sent);
      full_.store(full_.load(std::memory_order_relaxed) + (n - sent), std::memory_order_relaxed);
    }
    return TxResult::all_sent(pkts, sent);
  }

  // Drivers free sent mbufs lazily (when their descriptors are reused); when the pool runs
  // low, ask for the finished ones back.
  void poll_completions() noexcept override {
    const BufferPool& pool = *q_.pools[0];
    if (!ctx_.loopback && pool.available() < pool.capacity() / 4) rte_eth_tx_done_cleanup(ctx_.device.port(), id_, 0);
  }

  void refresh_counters() noexcept override { ctx_.port_stats.refresh(); }

  void add_details(QueueStats& s) const override {
    s.mode = "dpdk " + ctx_.device.driver() + " port " + std::to_string(ctx_.device.port()) + " queue " +
             std::to_string(id_) + (ctx_.loopback ? ", software loopback" : "") +
             (!headers_ ? ", raw frames" : offload_ ? ", checksum offload" : ", checksums by the CPU");
    s.engine_counters.emplace_back("mbufs_in_flight", mbufs_.in_flight());
    s.engine_counters.emplace_back("tx_ring_full", full_.load(std::memory_order_relaxed));
    if (id_ == 0) ctx_.port_stats.add_details(s, false);
  }

  uint32_t headroom() const noexcept override { return head_; }

 private:
  QueueResources q_;
  PortContext ctx_;
  TxMbufs& mbufs_;
  std::optional<Ipv4UdpHeaders> headers_;  // nullopt: raw frames (dpdk.tx_raw_frames)
  uint32_t head_;                           // bytes the engine writes in front of the payload
  uint16_t id_;
  bool offload_;
  std::vector<rte_mbuf*> m_;
  std::atomic<uint64_t> full_{0};
};

}  // namespace

std::unique_ptr<TxPort> make_tx_port(const QueueResources& q, const PortContext& ctx, TxMbufs& mbufs,
                                     const std::optional<Ipv4UdpHeaders>& headers) {
  return std::make_unique<DpdkTx>(q, ctx, mbufs, headers);
}

}  // namespace netdaq::detail::dpdk
