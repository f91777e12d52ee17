#include "core/tx_queue.h"

#include <algorithm>

#include "core/log.h"

namespace netdaq::detail {

TxQueueImpl::TxQueueImpl(QueueResources res, std::unique_ptr<TxPort> port)
    : res_(std::move(res)),
      port_(std::move(port)),
      pacer_(res_.iface->tx.rate_mbps, res_.iface->tx.rate_pps, res_.queue->batch_size),
      free_(res_.queue->ring_depth) {
  const uint32_t batch = res_.queue->batch_size;
  const uint32_t ndesc = res_.queue->ring_depth;
  packets_.resize(size_t{ndesc} * batch);
  descs_.resize(ndesc);
  for (uint32_t i = 0; i < ndesc; ++i) {
    descs_[i] = BurstDesc{packets_.data() + size_t{i} * batch, 0, 0, batch, this};
    BurstDesc* p = &descs_[i];
    free_.enqueue_bulk(&p, 1);
  }
}

TxQueueImpl::~TxQueueImpl() {
  if (int n = outstanding()) log()->warn("{}: destroyed while the application still holds {} bursts", res_.name, n);
}

TxBurst TxQueueImpl::allocate(size_t n) noexcept {
  if (handed_over_.load(std::memory_order_relaxed)) return {};
  port_->poll_completions();
  BurstDesc* d = hot_.exchange(nullptr, std::memory_order_acquire);
  if (!d && !free_.dequeue_burst(&d, 1)) return {};
  const uint32_t want = static_cast<uint32_t>(std::min<size_t>(n, d->capacity));
  d->first = 0;
  d->count = port_->alloc_buffers(res_, d->pkts, want);
  if (d->count < want) res_.counters->drop(DropReason::pool_empty, want - d->count);
  if (d->count == 0) {
    put_back(d);
    return {};
  }
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  return TxBurst(d);
}

uint32_t TxQueueImpl::send(BurstDesc* d) noexcept {
  uint32_t n = d->count - d->first;
  if (n == 0) return 0;
  Packet* pkts = d->pkts + d->first;
  uint32_t sizes[1024];
  if (pacer_.enabled()) {
    n = std::min<uint32_t>(n, 1024);
    for (uint32_t i = 0; i < n; ++i) sizes[i] = pkts[i].size();
    n = pacer_.admit(sizes, n, monotonic_ns());
    if (n == 0) return 0;
  }
  const TxResult r = port_->transmit(pkts, n);
  if (pacer_.enabled() && r.taken < n) pacer_.refund(sizes + r.taken, n - r.taken);
  // Taken but not sent: dropped, and counted by the port.
  if (r.sent) res_.counters->delivered(r.sent, r.sent_bytes);
  d->first += r.taken;
  return r.taken;
}

void TxQueueImpl::release(BurstDesc* d) noexcept {
  const uint32_t unsent = d->count - d->first;
  if (unsent) {
    res_.counters->drop(DropReason::tx_unsent, unsent);
    port_->free_buffers(res_, d->pkts + d->first, unsent);
  }
  d->count = d->first = 0;
  put_back(d);
  outstanding_.fetch_sub(1, std::memory_order_relaxed);
}

void TxQueueImpl::put_back(BurstDesc* d) noexcept {
  BurstDesc* empty = nullptr;
  if (!hot_.compare_exchange_strong(empty, d, std::memory_order_release, std::memory_order_relaxed))
    free_.enqueue_burst(&d, 1);
}

QueueStats TxQueueImpl::stats() const {
  port_->refresh_counters();
  QueueStats s;
  s.interface = res_.iface->name;
  s.queue = res_.name;
  s.is_rx = false;
  res_.counters->snapshot(s);
  port_->add_details(s);
  return s;
}

HandedOverTxRings TxQueueImpl::hand_over_rings(uint32_t payload_bytes, uint32_t buffers) {
  const std::string what = "tx queue " + res_.name + ": its rings cannot be handed over: ";
  if (handed_over_) throw Error(Errc::invalid_config, what + "they were handed over already");
  if (outstanding()) throw Error(Errc::invalid_config, what + "the application holds bursts of it; send or release them first");
  HandedOverTxRings r;
  std::string why;
  if (!port_->hand_over_rings(r, payload_bytes, buffers, why))
    throw Error(Errc::unsupported, what + (why.empty() ? "its engine has no rings shared with the kernel (an AF_XDP socket's)" : why));
  handed_over_ = true;
  return r;
}

}  // namespace netdaq::detail
