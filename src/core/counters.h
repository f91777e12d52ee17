// Live counters of one queue, updated with relaxed atomics (once per burst, not per packet)
// and read as a QueueStats snapshot from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "netdaq/stats.h"

namespace netdaq::detail {

struct QueueCounters {
  std::atomic<uint64_t> packets{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> bursts{0};
  std::atomic<uint64_t> copies{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> connections{0};
  std::atomic<int64_t> pool_in_use{0};
  // RX: buffers the queue's receiving thread took from the pool (took()), and those its worker
  // gave back on its own thread (put_back_local()): single writers, plain load + store. The
  // pool's in-use count is pool_in_use + pool_taken - pool_put_back. A locked instruction per
  // burst waits until the worker's stores to lines the application's core holds (the ring's,
  // a burst's) have drained: ~5% of the worker's rate on an H200 host (bench/README.md).
  std::atomic<uint64_t> pool_taken{0};
  std::atomic<uint64_t> pool_put_back{0};
  std::array<std::atomic<uint64_t>, kDropReasons> drops{};

  static void add(std::atomic<uint64_t>& c, uint64_t n) noexcept { c.fetch_add(n, std::memory_order_relaxed); }
  void drop(DropReason r, uint64_t n = 1) noexcept { add(drops[static_cast<size_t>(r)], n); }
  // TX: sends may come from several threads.
  void delivered(uint64_t pkts, uint64_t nbytes) noexcept {
    add(packets, pkts);
    add(bytes, nbytes);
    add(bursts, 1);
  }
  // RX: only the queue's receiving thread (its poller, or its worker) counts what it hands
  // over: a plain relaxed load + store, no locked read-modify-write per burst.
  static void bump(std::atomic<uint64_t>& c, uint64_t n) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void received(uint64_t pkts, uint64_t nbytes) noexcept {
    bump(packets, pkts);
    bump(bytes, nbytes);
    bump(bursts, 1);
  }
  void took(uint64_t n) noexcept { bump(pool_taken, n); }
  void put_back_local(uint64_t n) noexcept { bump(pool_put_back, n); }
  // Overwrite a counter that mirrors a cumulative OS counter (e.g. SO_RXQ_OVFL).
  void set_drop(DropReason r, uint64_t v) noexcept { drops[static_cast<size_t>(r)].store(v, std::memory_order_relaxed); }

  void snapshot(QueueStats& s) const noexcept {
    s.packets = packets.load(std::memory_order_relaxed);
    s.bytes = bytes.load(std::memory_order_relaxed);
    s.bursts = bursts.load(std::memory_order_relaxed);
    s.copies = copies.load(std::memory_order_relaxed);
    s.errors = errors.load(std::memory_order_relaxed);
    s.connections = connections.load(std::memory_order_relaxed);
    // Gives back first: a release read here came after its receive.
    const int64_t in_use = pool_in_use.load(std::memory_order_acquire) -
                           static_cast<int64_t>(pool_put_back.load(std::memory_order_acquire)) +
                           static_cast<int64_t>(pool_taken.load(std::memory_order_relaxed));
    s.pool_in_use = in_use > 0 ? static_cast<uint64_t>(in_use) : 0;
    for (size_t i = 0; i < kDropReasons; ++i) s.drops[i] = drops[i].load(std::memory_order_relaxed);
  }
};

// An identity of the calling thread (its thread-local storage): which thread a worker is.
inline const void* this_thread_tag() noexcept {
  static thread_local char tag;
  return &tag;
}

// Adds the growth of a cumulative OS/NIC counter (now) since the last call to a drop reason,
// exactly once even when several stats readers call it at the same time.
inline void mirror_counter(std::atomic<uint64_t>& seen, uint64_t now, QueueCounters& counters,
                           DropReason reason) noexcept {
  uint64_t old = seen.load(std::memory_order_relaxed);
  while (now > old && !seen.compare_exchange_weak(old, now, std::memory_order_relaxed)) {
  }
  if (now > old) counters.drop(reason, now - old);
}

}  // namespace netdaq::detail
