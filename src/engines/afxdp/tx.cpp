// AF_XDP send: the engine writes Ethernet/IPv4/UDP headers in front of each payload (the
// application's buffer starts after them), or with afxdp.tx_raw_frames the application writes
// the whole frame (its buffer starts at the Ethernet header), posts the frames on the TX ring and kicks the
// kernel; completed buffers come back on the completion ring and return to the pool. A full
// TX ring accepts fewer packets (counted in tx_ring_full; the caller retries), never blocks.
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "core/log.h"
#include "engines/afxdp/ports.h"
#include "engines/afxdp/shared_ring.h"
#include "util/errno_text.h"
#include "util/rate_limited_log.h"

namespace netdaq::detail::afxdp {

namespace {

class AfxdpTx final : public TxPort {
 public:
  AfxdpTx(const QueueResources& q, std::shared_ptr<XskSocket> xsk, const std::optional<Ipv4UdpHeaders>& headers)
      : q_(q), xsk_(std::move(xsk)), headers_(headers), head_(headers ? Ipv4UdpHeaders::kSize : 0),
        pool_(*q.pools[0]), base_(pool_.address(0)) {
    raise_send_budget();
  }

  ~AfxdpTx() override {
    if (handed_over_) {  // the rings and their buffers are someone else's
      release_handed_over(*xsk_->tx(), handed_tx_);
      release_handed_over(*xsk_->comp(), handed_comp_);
      return;
    }
    // Let the kernel finish what was posted (bounded), so buffers come home.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while ((pending() || in_flight_) && std::chrono::steady_clock::now() < deadline) {
      kick();
      reclaim();
      if (pending() || in_flight_) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (hot_n_) pool_.free_bulk(hot_.data(), hot_n_);
  }

  // The buffers the kernel completed last are handed out first (a stack of up to kHot),
  // before the pool's free list (a FIFO over the whole region: 16 MiB at 8192 x 2 KiB, so each
  // buffer came back cold). In copy mode the kernel copies every frame into an skb: from a
  // buffer still in L2, not from L3 (1 KB frames: 0.95x the af_xdp PMD, whose frames are
  // written by its own copy just before). Same thread as transmit (as reclaim already is).
  uint32_t alloc_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept override {
    if (q.segments != 1) return TxPort::alloc_buffers(q, pkts, n);
    const uint32_t k = std::min(n, hot_n_);
    const uint32_t cap = pool_.buf_size() - head_;
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t idx = hot_[--hot_n_];
      one_buffer_packet(pkts[i], idx, pool_.address(idx) + head_, cap);
    }
    if (k) q_.counters->pool_in_use.fetch_add(k, std::memory_order_relaxed);
    return k == n ? n : k + TxPort::alloc_buffers(q, pkts + k, n - k);
  }

  uint32_t headroom() const noexcept override { return head_; }

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    reclaim();
    xsk_ring_prod* tx = xsk_->tx();
    const uint32_t m = std::min(xsk_prod_nb_free(tx, n), n);
    if (m < n) ring_full_.fetch_add(n - m, std::memory_order_relaxed);
    if (m == 0) {
      kick();
      return {};
    }
    uint32_t idx = 0;
    xsk_ring_prod__reserve(tx, m, &idx);
    for (uint32_t i = 0; i < m; ++i) {
      PacketFields& f = fields(pkts[i]);
      std::byte* frame = f.data[0] - head_;
      if (headers_) headers_->write(frame, static_cast<uint16_t>(f.len[0]));
      xdp_desc* d = xsk_ring_prod__tx_desc(tx, idx + i);
      d->addr = static_cast<uint64_t>(frame - base_);
      d->len = head_ + f.len[0];
      d->options = 0;
    }
    xsk_ring_prod__submit(tx, m);
    in_flight_ += m;
    kick();
    return TxResult::all_sent(pkts, m);
  }

  void poll_completions() noexcept override {
    if (pending()) kick();
    reclaim();
  }

  void refresh_counters() noexcept override {
    const xdp_statistics s = xsk_->statistics();
    mirror_counter(seen_invalid_, s.tx_invalid_descs, *q_.counters, DropReason::tx_error);
  }

  bool hand_over_rings(HandedOverTxRings& r, uint32_t payload_bytes, uint32_t buffers, std::string& why) override {
    if (!headers_) {
      why = "afxdp.tx_raw_frames is set: the queue writes no headers for the new producer to copy";
      return false;
    }
    // A packet larger than a buffer spans several (XDP_PKT_CONTD), where the socket is
    // multi-buffer; the kernel takes at most kMaxTxFrags descriptors for one packet.
    const uint32_t room = pool_.buf_size() & ~7u;  // whole 8-byte words per buffer (the GPU writes words)
    const uint32_t packet = payload_bytes + head_;
    const uint32_t spans = (packet + room - 1) / room;
    if (spans > 1 && (!xsk_->multi_buffer() || spans > kMaxTxFrags)) {
      why = "a payload of " + std::to_string(payload_bytes) + " bytes and " + std::to_string(head_) +
            " bytes of headers do not fit a buffer of the queue's region (buf_size " + std::to_string(pool_.buf_size()) +
            ")" +
            (xsk_->multi_buffer() ? " nor " + std::to_string(kMaxTxFrags) + " of them (the kernel's limit for one packet)"
                                  : " and the socket is single-buffer (" + xsk_->mode() + ")");
      return false;
    }
    reclaim();
    if (pending() || in_flight_) {
      why = "packets it sent are still in flight";
      return false;
    }
    if (hot_n_) pool_.free_bulk(hot_.data(), hot_n_);
    hot_n_ = 0;
    // In flight at most what both rings hold: the kernel takes no descriptor whose completion
    // would not fit.
    std::vector<uint32_t> idx(std::min({buffers, xsk_->tx()->size, xsk_->comp()->size}));
    idx.resize(pool_.alloc_burst(idx.data(), static_cast<uint32_t>(idx.size())));
    if (idx.empty()) {
      why = "its pool has no free buffer";
      return false;
    }
    q_.counters->pool_in_use.fetch_add(idx.size(), std::memory_order_relaxed);
    for (uint32_t i : idx) r.buffers.push_back(static_cast<uint64_t>(pool_.address(i) - base_));
    r.headers.resize(head_);
    headers_->write(r.headers.data(), static_cast<uint16_t>(payload_bytes));
    r.tx = handed_tx_ = shared_ring(*xsk_->tx(), sizeof(xdp_desc));
    r.completion = handed_comp_ = shared_ring(*xsk_->comp(), sizeof(uint64_t));
    r.umem = base_;
    r.chunk = static_cast<uint32_t>(pool_.stride());
    r.buffer_bytes = room;
    r.multi_buffer = xsk_->multi_buffer();
    r.umem_bytes = size_t{pool_.capacity()} * pool_.stride();
    r.fd = xsk_->fd();
    r.need_wakeup = xsk_->need_wakeup();
    r.zero_copy = xsk_->zero_copy();
    handed_over_ = true;
    return true;
  }

  void add_details(QueueStats& s) const override {
    s.mode = "afxdp " + xsk_->mode() + (headers_ ? "" : ", raw frames") + (handed_over_ ? ", rings handed over" : "") +
             (budget_ > 32 ? ", up to " + std::to_string(budget_) + " frames a send call" : "");
    const xdp_statistics x = xsk_->statistics();
    s.engine_counters = {{"tx_ring_full", ring_full_.load(std::memory_order_relaxed)},
                         {"xsk_tx_ring_empty", x.tx_ring_empty_descs},
                         {"xsk_tx_invalid_descs", x.tx_invalid_descs},
                         {"kicks", kicks_.load(std::memory_order_relaxed)}};
  }

 private:
  // Copy mode: the kernel takes at most 32 descriptors per send call (TX_BATCH_SIZE), so a
  // burst of 64 cost two calls. Linux 6.17+ lets a socket raise that up to its ring's size
  // (XDP_MAX_TX_SKB_BUDGET): one call per burst. Older kernels refuse it (ENOPROTOOPT) and
  // keep 32 a call, as before.
  void raise_send_budget() noexcept {
    if (xsk_->zero_copy()) return;
    unsigned budget = xsk_->tx()->size;
    if (setsockopt(xsk_->fd(), SOL_XDP, kMaxTxSkbBudget, &budget, sizeof budget) == 0) {
      budget_ = budget;
    } else {
      const int err = errno;
      log()->debug("{}: XDP_MAX_TX_SKB_BUDGET {}: {} (32 descriptors a send call)", q_.name, budget, errno_text(err));
    }
  }

  // Descriptors posted that the kernel has not taken yet.
  uint32_t pending() const noexcept {
    const xsk_ring_prod* tx = xsk_->tx();
    return tx->cached_prod - __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE);
  }

  // Returns completed buffers to the pool.
  void reclaim() noexcept {
    xsk_ring_cons* comp = xsk_->comp();
    uint32_t idx = 0;
    uint32_t n;
    while ((n = xsk_ring_cons__peek(comp, kBatch, &idx)) > 0) {
      uint32_t bufs[kBatch];
      uint32_t k = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const auto b = static_cast<uint32_t>(*xsk_ring_cons__comp_addr(comp, idx + i) / pool_.stride());
        if (hot_n_ < kHot) hot_[hot_n_++] = b;
        else bufs[k++] = b;
      }
      xsk_ring_cons__release(comp, n);
      if (k) pool_.free_bulk(bufs, k);
      q_.counters->pool_in_use.fetch_sub(n, std::memory_order_relaxed);
      in_flight_ -= n;
    }
  }

  // Makes the kernel send what is posted. In copy mode it sends at most 32 frames per call,
  // so a burst takes several calls; a busy device (EAGAIN/EBUSY/ENOBUFS) is retried later.
  void kick() noexcept {
    if (xsk_->zero_copy() && xsk_->need_wakeup() && !xsk_ring_prod__needs_wakeup(xsk_->tx()) && !xsk_->busy_poll())
      return;
    const uint32_t calls = xsk_->zero_copy() ? 1 : pending() / budget_ + 2;
    for (uint32_t i = 0; i < calls && (xsk_->zero_copy() || pending()); ++i) {
      kicks_.fetch_add(1, std::memory_order_relaxed);
      if (sendto(xsk_->fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) >= 0) continue;
      if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS) {
        reclaim();  // a full completion ring also stops the kernel
        continue;
      }
      q_.counters->errors.fetch_add(1, std::memory_order_relaxed);
      const int err = errno;
      errlog_.log([&](uint64_t) { log()->warn("{}: AF_XDP send failed: {}", q_.name, errno_text(err)); });
      return;
    }
  }

  static constexpr uint32_t kBatch = 256;
#ifdef XDP_MAX_TX_SKB_BUDGET
  static constexpr int kMaxTxSkbBudget = XDP_MAX_TX_SKB_BUDGET;
#else
  static constexpr int kMaxTxSkbBudget = 9;  // linux/if_xdp.h of 6.17+
#endif
  // Descriptors of one packet the kernel's copy path takes (MAX_SKB_FRAGS, 17 by default, less
  // one to stay clear of its edge); zero-copy drivers may take fewer (xdp_zc_max_segs).
  static constexpr uint32_t kMaxTxFrags = 16;
  uint32_t budget_ = 32;  // descriptors the kernel takes per send call (copy mode)
  QueueResources q_;
  std::shared_ptr<XskSocket> xsk_;
  std::optional<Ipv4UdpHeaders> headers_;  // nullopt: raw frames
  uint32_t head_;                           // bytes the engine writes in front of the payload
  BufferPool& pool_;
  std::byte* base_;
  uint64_t in_flight_ = 0;
  bool handed_over_ = false;
  SharedRing handed_tx_, handed_comp_;  // as handed over (their addresses shared with the new owner)
  static constexpr uint32_t kHot = 512;  // 1 MiB of 2 KiB buffers: what L2 holds
  std::array<uint32_t, kHot> hot_{};      // completed buffers, the last on top (counted free)
  uint32_t hot_n_ = 0;
  RateLimitedLog errlog_{RateLimitedLog::kOnce};  // the first failure; the rest are counted
  std::atomic<uint64_t> ring_full_{0}, kicks_{0}, seen_invalid_{0};
};

}  // namespace

std::unique_ptr<TxPort> make_tx_port(const QueueResources& q, std::shared_ptr<XskSocket> xsk,
                                     const std::optional<Ipv4UdpHeaders>& headers) {
  return std::make_unique<AfxdpTx>(q, std::move(xsk), headers);
}

}  // namespace netdaq::detail::afxdp
