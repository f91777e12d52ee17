#include "core/rx_queue.h"


#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>

#include "core/log.h"
#include "core/pacer.h"
#include "netdaq/engine_info.h"
#include "netdaq/status.h"

namespace netdaq::detail {

namespace {
bool finite_source(const InterfaceConfig* iface) {
  if (!iface) return false;
  const auto caps = capabilities_of(*iface);
  return caps && caps->finite_source;
}
}  // namespace

RxQueueImpl::RxQueueImpl(QueueResources res, std::unique_ptr<RxPort> port)
    : res_(std::move(res)),
      port_(std::move(port)),
      descs_(new LineDesc[res_.queue->ring_depth]),
      hold_back_(finite_source(res_.iface)),
      worker_mode_(res_.queue->mode == PollMode::worker),
      free_(res_.queue->ring_depth + 1),
      ready_(res_.queue->ring_depth),
      idle_(new BurstDesc*[res_.queue->ring_depth]),
      out_(new LineDesc*[std::bit_ceil(res_.queue->ring_depth)]),
      out_mask_(std::bit_ceil(res_.queue->ring_depth) - 1) {
  const uint32_t batch = res_.queue->batch_size;
  const uint32_t ndesc = res_.queue->ring_depth;
  packets_.resize(size_t{ndesc + 1} * batch);
  for (uint32_t i = 0; i < ndesc; ++i) {
    descs_[i].d = BurstDesc{packets_.data() + size_t{i} * batch, 0, 0, batch, this};
    BurstDesc* p = &descs_[i].d;
    if (worker_mode_)
      worker_put(p);
    else
      free_.enqueue_bulk(&p, 1);
  }
  spare_ = BurstDesc{packets_.data() + size_t{ndesc} * batch, 0, 0, batch, this};
  port_->prepare(packets_.data(), packets_.size());
}

RxQueueImpl::~RxQueueImpl() {
  stop();
  if (int n = outstanding()) log()->warn("{}: destroyed while the application still holds {} bursts", res_.name, n);
}

int RxQueueImpl::outstanding() const noexcept {
  if (!worker_mode_) return outstanding_.load(std::memory_order_relaxed);
  int n = 0;
  for (uint32_t i = 0; i < res_.queue->ring_depth; ++i) {
    const Holder h = descs_[i].holder.load(std::memory_order_relaxed);
    n += h == Holder::app || h == Holder::orphan;
  }
  return n;
}

// After the worker's last step. Bursts returned are freed; bursts the application still
// holds become orphans, freed by their release (the exchange there and the one here decide
// who frees each burst exactly once); bursts never polled are released here.
void RxQueueImpl::stop() noexcept {
  if (!worker_mode_) return;  // a second call finds the ring and the FIFO empty
  BurstDesc* d;
  while (ready_.pop(d)) line_of(d).holder.store(Holder::returned, std::memory_order_relaxed);
  begin_frees();
  for (; out_tail_ != out_head_; ++out_tail_) {
    LineDesc& l = *out_[out_tail_ & out_mask_];
    Holder h = Holder::app;
    if (!l.holder.compare_exchange_strong(h, Holder::orphan, std::memory_order_acq_rel)) free_returned(l);
  }
  end_frees();
}

void RxQueueImpl::deliver_count(const BurstDesc& d) noexcept {
  res_.counters->received(d.count - d.first, d.bytes);
}

// Counted before the push: once in the ring the burst is the application's, which may
// release it (zeroing its count) before the worker runs another line, and a reader that
// has polled every packet must find them all counted.
// Each burst is published at once: the application sees it (and releases it) sooner, so fewer
// bursts are between the worker's receive and its free, and their mbufs and packet arrays
// stay in the worker's L1. Publishing every 4th burst instead (fewer moves of the ring's index
// line) made the worker 1.5x slower on the H200 hosts (bench/README.md, stop 27).
void RxQueueImpl::hand_over(BurstDesc* d) noexcept {
  deliver_count(*d);
  LineDesc& l = line_of(d);
  l.holder.store(Holder::app, std::memory_order_relaxed);  // published by the ring's release store
  out_[out_head_++ & out_mask_] = &l;
  ready_.push(d);
  reclaim(kReclaimLag);  // the oldest burst's line was prefetched when this step began
}

RxBurst RxQueueImpl::poll() noexcept {
  BurstDesc* d = nullptr;
  if (worker_mode_) {
    if (!ready_.pop(d)) return {};
    // The next burst's line, when the ring already shows it: its miss overlaps this burst's
    // work. For writing: the release's exchange follows the reads of its count, and a line
    // fetched shared would cross from the worker's core a second time for it.
    if (BurstDesc* next; ready_.peek_cached(next)) __builtin_prefetch(next, 1);
    return RxBurst(d);
  }
  if (!(d = take_free())) return {};  // the application holds every burst
  d->first = 0;
  d->bytes = 0;
  d->count = port_->receive(d->pkts, d->capacity, d->bytes);
  if (d->count == 0) {
    put_free(d);
    return {};
  }
  deliver_count(*d);
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  return RxBurst(d);
}

void RxQueueImpl::free_packets(BurstDesc* d) noexcept {
  if (d->count > d->first) port_->release(d->pkts + d->first, d->count - d->first);
  d->count = d->first = 0;
  d->bytes = 0;
}

// Worker mode: O(1) on the application's thread, one exchange on the burst's line; the
// worker frees the buffers (reclaim). After stop() the burst is an orphan: freed here.
void RxQueueImpl::release(BurstDesc* d) noexcept {
  if (worker_mode_ && d != &spare_) {
    LineDesc& l = line_of(d);
    if (l.holder.exchange(Holder::returned, std::memory_order_acq_rel) != Holder::orphan) return;
    free_packets(d);
    l.holder.store(Holder::worker, std::memory_order_relaxed);
    return;
  }
  free_packets(d);
  if (d != &spare_) {
    put_free(d);
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
  }
}

// The sequence lock around frees of returned bursts (odd inside; one freeing thread at a time:
// the worker, or stop() after it).
void RxQueueImpl::begin_frees() noexcept {
  reclaim_seq_.store(reclaim_seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void RxQueueImpl::end_frees() noexcept {
  reclaim_seq_.store(reclaim_seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// The worker frees returned bursts inside a sequence lock: stats() subtracts the buffers of
// bursts returned but not yet freed from the engine's pool_in_use, and must not see the
// engine's count and a burst's holder from either side of one free.
void RxQueueImpl::free_returned(LineDesc& l) noexcept {
  free_packets(&l.d);
  l.holder.store(Holder::worker, std::memory_order_relaxed);
  worker_put(&l.d);
}

// In the order handed over, while the oldest was returned: a burst freed last is reused
// first, so what the worker touches next is still in its caches.
void RxQueueImpl::reclaim(uint32_t keep) noexcept {
  if (out_head_ - out_tail_ <= keep ||
      out_[out_tail_ & out_mask_]->holder.load(std::memory_order_acquire) != Holder::returned)
    return;
  begin_frees();
  do {
    free_returned(*out_[out_tail_++ & out_mask_]);
  } while (out_head_ - out_tail_ > keep &&
           out_[out_tail_ & out_mask_]->holder.load(std::memory_order_acquire) == Holder::returned);
  end_frees();
}

// When the worker has no free burst left but the oldest is still held: every returned burst,
// wherever it is in the FIFO (an application may keep one burst and release later ones).
void RxQueueImpl::reclaim_any() noexcept {
  begin_frees();
  uint32_t kept = out_tail_;
  for (uint32_t i = out_tail_; i != out_head_; ++i) {
    LineDesc* l = out_[i & out_mask_];
    if (l->holder.load(std::memory_order_acquire) == Holder::returned)
      free_returned(*l);
    else
      out_[kept++ & out_mask_] = l;
  }
  out_head_ = kept;
  end_frees();
}

// Free bursts: the one released last waits in hot_ and is taken first (its packet array is
// still in the cache: a direct-mode loop reuses one burst instead of cycling through
// ring_depth of them); the others in the free_ ring.
BurstDesc* RxQueueImpl::take_free() noexcept {
  BurstDesc* d = hot_.exchange(nullptr, std::memory_order_acquire);
  if (!d && !free_.dequeue_burst(&d, 1)) return nullptr;
  return d;
}

void RxQueueImpl::put_free(BurstDesc* d) noexcept {
  if (BurstDesc* old = hot_.exchange(d, std::memory_order_acq_rel)) free_.enqueue_burst(&old, 1);
}

// The worker's free bursts; when none is left, what the application returned meanwhile (the
// oldest first; any returned one when the oldest is still held).
BurstDesc* RxQueueImpl::worker_take() noexcept {
  if (nidle_ == 0) {
    reclaim();
    if (nidle_ == 0 && out_tail_ != out_head_) reclaim_any();
  }
  return nidle_ ? idle_[--nidle_] : nullptr;
}

bool RxQueueImpl::worker_step() noexcept {
  if (hold_back_) return worker_step_held();
  // The oldest burst handed over: whether it came back is read after the receive (hand_over),
  // its line (which the application's release took) on its way meanwhile, for writing: the
  // free resets its count.
  if (out_head_ - out_tail_ >= kReclaimLag) __builtin_prefetch(&out_[out_tail_ & out_mask_]->holder, 1);
  if (!cur_ || (cur_ == &spare_ && cur_->count == 0)) {
    // The app holds all bursts: receive into spare_ (will drop). Leave spare_ as soon as
    // the app has released one, or the next batch is dropped although there is room.
    BurstDesc* d = worker_take();
    if (d) cur_ = d;
    else if (!cur_) cur_ = &spare_;
    cur_->count = cur_->first = 0;
    cur_->bytes = 0;
  }
  BurstDesc* cur = cur_;
  const uint32_t n = port_->receive(cur->pkts + cur->count, cur->capacity - cur->count, cur->bytes);
  // The burst's first packets start its timeout, unless they fill it at once (the clock is
  // read per burst only when it is needed).
  if (n && cur->count == 0 && n < cur->capacity) first_ns_ = monotonic_ns();
  cur->count += n;
  const bool full = cur->count == cur->capacity;
  if (full || (cur->count && monotonic_ns() - first_ns_ >= uint64_t{res_.queue->timeout_us} * 1000)) {
    BurstDesc* d = nullptr;
    if (cur == &spare_ && (d = worker_take())) {  // a burst was released meanwhile
      // The two swap packet slots (an engine may keep state per slot: RxPort::prepare).
      std::swap(spare_.pkts, d->pkts);
      d->count = spare_.count;
      d->first = 0;
      d->bytes = spare_.bytes;
      spare_.count = 0;
      spare_.bytes = 0;
      cur = d;
    }
    if (cur != &spare_ && ready_.has_room()) {
      hand_over(cur);
    } else {
      res_.counters->drop(DropReason::ring_full, cur->count);
      port_->release(cur->pkts, cur->count);
      cur->count = 0;
      cur->bytes = 0;
      if (cur != &spare_) worker_put(cur);
    }
    cur_ = nullptr;
  }
  if (n == 0) reclaim();  // idle: the buffers go back now
  return n != 0;
}

// Worker mode for a finite source (a capture file): the application holds it back instead of
// losing its packets. It receives only into a free burst and hands a burst over only when the
// ring has room (a file cannot overflow; a network can), and at the end of the source the last
// partial burst goes out at once, not at the timeout.
bool RxQueueImpl::worker_step_held() noexcept {
  reclaim();
  if (!cur_) {
    if (!(cur_ = worker_take())) return false;  // the application holds every burst: wait
    cur_->count = cur_->first = 0;
    cur_->bytes = 0;
  }
  BurstDesc* cur = cur_;
  uint32_t n = 0;
  if (cur->count < cur->capacity) {
    n = port_->receive(cur->pkts + cur->count, cur->capacity - cur->count, cur->bytes);
    if (n && cur->count == 0) first_ns_ = monotonic_ns();
    cur->count += n;
  }
  const bool ended = n == 0 && port_->finished();
  const bool due = cur->count == cur->capacity ||
                   (cur->count && (ended || monotonic_ns() - first_ns_ >= uint64_t{res_.queue->timeout_us} * 1000));
  if (due && ready_.has_room()) {
    hand_over(cur);
    cur_ = nullptr;
  }
  // After the hand-over: finished() sees every packet in the ring.
  if (ended && (!cur_ || cur_->count == 0)) drained_.store(true, std::memory_order_release);
  return n != 0;
}

bool RxQueueImpl::finished() const noexcept {
  if (res_.queue->mode != PollMode::worker) return port_->finished();
  return drained_.load(std::memory_order_acquire) && ready_.size_approx() == 0;
}

void RxQueueImpl::worker_finish() noexcept {
  BurstDesc* cur = cur_;
  cur_ = nullptr;
  if (!cur) return;
  if (cur->count && cur != &spare_ && ready_.has_room()) {  // a partial burst: hand it over if there is room
    hand_over(cur);
  } else {
    port_->release(cur->pkts, cur->count);
    cur->count = 0;
    cur->bytes = 0;
    if (cur != &spare_) worker_put(cur);
  }
}

// Worker mode: what the bursts returned but not yet freed hold of pool_in_use, which counts
// one per set of buffers a packet takes from the queue's pools: a header-data split packet
// (one buffer of each pool) holds one, a packet in two buffers of one pool (afxdp
// multi-buffer) two.
uint64_t RxQueueImpl::returned_buffers() const noexcept {
  uint64_t n = 0;
  if (worker_mode_)
    for (uint32_t i = 0; i < res_.queue->ring_depth; ++i) {
      const LineDesc& l = descs_[i];
      if (l.holder.load(std::memory_order_acquire) != Holder::returned) continue;
      if (res_.segments > 1) {
        n += l.d.count - l.d.first;
        continue;
      }
      for (uint32_t k = l.d.first; k < l.d.count; ++k) n += l.d.pkts[k].segments();
    }
  return n;
}

QueueStats RxQueueImpl::stats() const {
  port_->refresh_counters();
  QueueStats s;
  s.interface = res_.iface->name;
  s.queue = res_.name;
  s.is_rx = true;
  for (uint32_t spins = 0;; ++spins) {  // consistent with reclaim(): see there
    const uint32_t seq = reclaim_seq_.load(std::memory_order_acquire);
    if (!(seq & 1)) {
      res_.counters->snapshot(s);
      const uint64_t r = returned_buffers();
      std::atomic_thread_fence(std::memory_order_acquire);
      if (reclaim_seq_.load(std::memory_order_relaxed) == seq) {
        s.pool_in_use = s.pool_in_use > r ? s.pool_in_use - r : 0;
        break;
      }
    }
    if (spins < 128) NETDAQ_CPU_RELAX();
    else sched_yield();
  }
  port_->add_details(s);
  return s;
}

}  // namespace netdaq::detail

namespace netdaq::detail {

HandedOverRings RxQueueImpl::hand_over_rings() {
  const std::string what = "rx queue " + res_.name + ": its rings cannot be handed over: ";
  if (worker_mode_) throw Error(Errc::invalid_config, what + "the queue runs in worker mode (a worker thread polls it); use mode: direct");
  if (handed_over_) throw Error(Errc::invalid_config, what + "they were handed over already");
  HandedOverRings r;
  if (!port_->hand_over_rings(r))
    throw Error(Errc::unsupported, what + "its engine has no rings shared with the kernel (an AF_XDP socket's)");
  handed_over_ = true;
  return r;
}

}  // namespace netdaq::detail
