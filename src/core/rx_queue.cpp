#include "core/rx_queue.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/log.h"
#include "core/pacer.h"
#include "netdaq/status.h"

namespace netdaq::detail {

bool pin_current_thread(int cpu, const std::string& name) noexcept {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) errno = rc;
  return rc == 0;
}

void check_cpu_usable(int cpu, const std::string& queue_name) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) throw_system_error("sched_getaffinity", errno);
  if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)) {
    std::string allowed;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) allowed += (allowed.empty() ? "" : ",") + std::to_string(c);
    throw Error(Errc::not_found, "queue " + queue_name + ": cpu_core " + std::to_string(cpu) +
                                     " is not available to this process (usable CPUs: " + allowed + ")");
  }
}

namespace {
uint32_t burst_bytes(const BurstDesc& d) noexcept {
  uint64_t b = 0;
  for (uint32_t i = d.first; i < d.count; ++i) b += d.pkts[i].size();
  return static_cast<uint32_t>(b);
}

// Idle policy for a worker that found nothing: spin briefly (low latency), then sleep a
// little so an idle queue does not burn a core.
void idle_backoff(uint32_t empty_polls) noexcept {
  if (empty_polls < 2048) {
    NETDAQ_CPU_RELAX();
  } else {
    timespec ts{0, 20'000};
    nanosleep(&ts, nullptr);
  }
}
}  // namespace

RxQueueImpl::RxQueueImpl(QueueResources res, std::unique_ptr<RxPort> port)
    : res_(std::move(res)),
      port_(std::move(port)),
      free_(res_.queue->ring_depth + 1),
      ready_(res_.queue->ring_depth) {
  const uint32_t batch = res_.queue->batch_size;
  const uint32_t ndesc = res_.queue->ring_depth;
  packets_.resize(size_t{ndesc + 1} * batch);
  descs_.resize(ndesc);
  for (uint32_t i = 0; i < ndesc; ++i) {
    descs_[i] = BurstDesc{packets_.data() + size_t{i} * batch, 0, 0, batch, this};
    BurstDesc* p = &descs_[i];
    free_.enqueue_bulk(&p, 1);
  }
  spare_ = BurstDesc{packets_.data() + size_t{ndesc} * batch, 0, 0, batch, this};
}

RxQueueImpl::~RxQueueImpl() {
  stop();
  if (int n = outstanding()) log()->warn("{}: destroyed while the application still holds {} bursts", res_.name, n);
}

void RxQueueImpl::start() {
  if (res_.queue->mode != PollMode::worker || running_.load()) return;
  check_cpu_usable(res_.queue->cpu_core, res_.name);
  running_.store(true);
  worker_ = std::thread([this] { worker_loop(); });
}

void RxQueueImpl::stop() noexcept {
  running_.store(false);
  if (worker_.joinable()) worker_.join();
  // Bursts the worker delivered but the application never polled.
  BurstDesc* d;
  while (ready_.pop(d)) {
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    release(d);
  }
}

void RxQueueImpl::deliver_count(const BurstDesc& d) noexcept {
  res_.counters->delivered(d.count - d.first, burst_bytes(d));
}

RxBurst RxQueueImpl::poll() noexcept {
  BurstDesc* d = nullptr;
  if (res_.queue->mode == PollMode::worker) {
    if (!ready_.pop(d)) return {};
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    return RxBurst(d);
  }
  if (!free_.dequeue_burst(&d, 1)) return {};  // the application holds every burst
  d->first = 0;
  d->count = port_->receive(d->pkts, d->capacity);
  if (d->count == 0) {
    free_.enqueue_burst(&d, 1);
    return {};
  }
  deliver_count(*d);
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  return RxBurst(d);
}

void RxQueueImpl::release(BurstDesc* d) noexcept {
  if (d->count > d->first) port_->release(d->pkts + d->first, d->count - d->first);
  d->count = d->first = 0;
  if (d != &spare_) {
    free_.enqueue_burst(&d, 1);
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void RxQueueImpl::worker_loop() noexcept {
  if (!pin_current_thread(res_.queue->cpu_core, "ndq-" + res_.name))
    log()->error("{}: cannot pin worker to cpu {}: {}", res_.name, res_.queue->cpu_core, std::strerror(errno));
  const uint64_t timeout_ns = uint64_t{res_.queue->timeout_us} * 1000;
  BurstDesc* cur = nullptr;
  uint64_t first_ns = 0;
  uint32_t empty_polls = 0;

  while (running_.load(std::memory_order_relaxed)) {
    if (!cur || (cur == &spare_ && cur->count == 0)) {
      // The app holds all bursts: receive into spare_ (will drop). Leave spare_ as soon as
      // the app has released one, or the next batch is dropped although there is room.
      BurstDesc* d = nullptr;
      if (free_.dequeue_burst(&d, 1)) cur = d;
      else if (!cur) cur = &spare_;
      cur->count = cur->first = 0;
    }
    const uint32_t n = port_->receive(cur->pkts + cur->count, cur->capacity - cur->count);
    if (n) {
      if (cur->count == 0) first_ns = monotonic_ns();
      cur->count += n;
      empty_polls = 0;
    }
    const bool full = cur->count == cur->capacity;
    if (full || (cur->count && monotonic_ns() - first_ns >= timeout_ns)) {
      BurstDesc* d = nullptr;
      if (cur == &spare_ && free_.dequeue_burst(&d, 1)) {  // a burst was released meanwhile
        std::copy(spare_.pkts, spare_.pkts + spare_.count, d->pkts);
        d->count = spare_.count;
        d->first = 0;
        spare_.count = 0;
        cur = d;
      }
      if (cur != &spare_ && ready_.push(cur)) {
        deliver_count(*cur);
      } else {
        res_.counters->drop(DropReason::ring_full, cur->count);
        port_->release(cur->pkts, cur->count);
        cur->count = 0;
        if (cur != &spare_) free_.enqueue_burst(&cur, 1);
      }
      cur = nullptr;
    }
    if (!n) idle_backoff(empty_polls++);
  }
  if (cur) {  // a partial burst at shutdown: hand it over if there is room
    if (cur->count && cur != &spare_ && ready_.push(cur)) {
      deliver_count(*cur);
    } else {
      port_->release(cur->pkts, cur->count);
      cur->count = 0;
      if (cur != &spare_) free_.enqueue_burst(&cur, 1);
    }
  }
}

QueueStats RxQueueImpl::stats() const {
  port_->refresh_counters();
  QueueStats s;
  s.interface = res_.iface->name;
  s.queue = res_.name;
  s.is_rx = true;
  res_.counters->snapshot(s);
  port_->add_details(s);
  return s;
}

}  // namespace netdaq::detail
