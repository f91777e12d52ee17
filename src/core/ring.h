// Lock-free bounded rings.
//  SpscRing: one producer thread, one consumer thread (worker → application).
//  MpmcRing: any threads; bulk reserve-copy-publish like DPDK's rte_ring, so a burst of n
//            items costs one CAS, not n (used for pool free lists and burst descriptors).
#pragma once

#include <sched.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NETDAQ_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define NETDAQ_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define NETDAQ_CPU_RELAX() ((void)0)
#endif

namespace netdaq::detail {

inline constexpr size_t kCacheLine = 64;

inline uint32_t ring_size_for(uint32_t capacity) {
  if (capacity == 0 || capacity > (1u << 30)) throw std::invalid_argument("ring capacity must be 1..2^30");
  return std::bit_ceil(capacity);
}

template <typename T>
class SpscRing {
 public:
  explicit SpscRing(uint32_t capacity)
      : size_(ring_size_for(capacity)), mask_(size_ - 1), slots_(new T[size_]) {}

  uint32_t capacity() const noexcept { return size_; }

  bool push(const T& v) noexcept { return push_burst(&v, 1) == 1; }
  bool pop(T& v) noexcept { return pop_burst(&v, 1) == 1; }

  uint32_t push_burst(const T* items, uint32_t n) noexcept {
    const uint32_t head = head_mine_;
    uint32_t free = size_ - (head - tail_cache_);
    if (free < n) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      free = size_ - (head - tail_cache_);
      if (free < n) n = free;
    }
    for (uint32_t i = 0; i < n; ++i) slots_[(head + i) & mask_] = items[i];
    head_mine_ = head + n;
    head_.store(head + n, std::memory_order_release);
    return n;
  }

  // Producer only: whether one push would succeed now (the consumer can only make more room).
  bool has_room() noexcept {
    const uint32_t head = head_mine_;
    if (head - tail_cache_ < size_) return true;
    tail_cache_ = tail_.load(std::memory_order_acquire);
    return head - tail_cache_ < size_;
  }

  uint32_t pop_burst(T* items, uint32_t n) noexcept {
    const uint32_t tail = tail_mine_;
    uint32_t avail = head_cache_ - tail;
    if (avail < n) {
      head_cache_ = head_.load(std::memory_order_acquire);
      avail = head_cache_ - tail;
      if (avail < n) n = avail;
    }
    for (uint32_t i = 0; i < n; ++i) items[i] = slots_[(tail + i) & mask_];
    if (n) {
      tail_mine_ = tail + n;
      tail_.store(tail + n, std::memory_order_release);
    }
    return n;
  }

  // Consumer only: the item the next pop returns, if the consumer's cached view of head_ already
  // holds it (no load of the producer's line): for prefetching what it points to.
  bool peek_cached(T& v) const noexcept {
    if (head_cache_ == tail_mine_) return false;
    v = slots_[tail_mine_ & mask_];
    return true;
  }

  uint32_t size_approx() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }

 private:
  const uint32_t size_;
  const uint32_t mask_;
  std::unique_ptr<T[]> slots_;
  // Each side reads only its own line, and the other's published index when its cached view
  // runs out: a consumer spinning on an empty ring does not take the producer's line away
  // from it at every poll (it did, when the producer's own index shared a line with the
  // published one).
  alignas(kCacheLine) uint32_t head_mine_ = 0;   // producer: its index
  uint32_t tail_cache_ = 0;                      // producer: its view of tail
  alignas(kCacheLine) std::atomic<uint32_t> head_{0};  // published by the producer
  alignas(kCacheLine) std::atomic<uint32_t> tail_{0};  // published by the consumer
  alignas(kCacheLine) uint32_t tail_mine_ = 0;   // consumer: its index
  uint32_t head_cache_ = 0;                      // consumer: its view of head
};

template <typename T>
class MpmcRing {
 public:
  explicit MpmcRing(uint32_t capacity)
      : size_(ring_size_for(capacity)), mask_(size_ - 1), slots_(new T[size_]) {}

  uint32_t capacity() const noexcept { return size_; }

  // Up to n items (burst) or exactly n / none (bulk). Return the number moved.
  uint32_t enqueue_burst(const T* items, uint32_t n) noexcept { return enqueue(items, n, false); }
  uint32_t enqueue_bulk(const T* items, uint32_t n) noexcept { return enqueue(items, n, true); }
  uint32_t dequeue_burst(T* items, uint32_t n) noexcept { return dequeue(items, n, false); }
  uint32_t dequeue_bulk(T* items, uint32_t n) noexcept { return dequeue(items, n, true); }

  uint32_t size_approx() const noexcept {
    return prod_.tail.load(std::memory_order_acquire) - cons_.tail.load(std::memory_order_acquire);
  }

 private:
  struct alignas(kCacheLine) HeadTail {
    std::atomic<uint32_t> head{0};
    std::atomic<uint32_t> tail{0};
  };

  // Reserve [head, head+n) against the other side's tail; `limit` is what is usable
  // (free slots for producers, filled slots for consumers).
  template <bool kProducer>
  uint32_t reserve(HeadTail& mine, const HeadTail& other, uint32_t n, bool bulk, uint32_t& head) noexcept {
    head = mine.head.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t other_tail = other.tail.load(std::memory_order_acquire);
      const uint32_t usable = kProducer ? size_ + other_tail - head : other_tail - head;
      if (usable > size_) {  // stale head read (another thread moved on): reload
        head = mine.head.load(std::memory_order_acquire);
        continue;
      }
      uint32_t m = n <= usable ? n : (bulk ? 0 : usable);
      if (m == 0) return 0;
      if (mine.head.compare_exchange_weak(head, head + m, std::memory_order_acq_rel,
                                          std::memory_order_acquire))
        return m;
    }
  }

  // Publish in reservation order: wait for earlier reservers to publish first. If one of
  // them was preempted (more threads than cores), yield instead of spinning on.
  static void publish(HeadTail& mine, uint32_t head, uint32_t m) noexcept {
    for (uint32_t spins = 0; mine.tail.load(std::memory_order_relaxed) != head; ++spins) {
      if (spins < 128)
        NETDAQ_CPU_RELAX();
      else
        sched_yield();
    }
    mine.tail.store(head + m, std::memory_order_release);
  }

  uint32_t enqueue(const T* items, uint32_t n, bool bulk) noexcept {
    uint32_t head;
    const uint32_t m = reserve<true>(prod_, cons_, n, bulk, head);
    for (uint32_t i = 0; i < m; ++i) slots_[(head + i) & mask_] = items[i];
    if (m) publish(prod_, head, m);
    return m;
  }

  uint32_t dequeue(T* items, uint32_t n, bool bulk) noexcept {
    uint32_t head;
    const uint32_t m = reserve<false>(cons_, prod_, n, bulk, head);
    for (uint32_t i = 0; i < m; ++i) items[i] = slots_[(head + i) & mask_];
    if (m) publish(cons_, head, m);
    return m;
  }

  const uint32_t size_;
  const uint32_t mask_;
  std::unique_ptr<T[]> slots_;
  HeadTail prod_;
  HeadTail cons_;
};

}  // namespace netdaq::detail
