// RX queue: hands bursts from an engine's RxPort to the application, either polled directly
// by the caller or filled by a pinned worker thread (worker_thread.h: one per CPU, serving
// every worker-mode queue pinned there) through an SPSC ring of bursts. In worker mode the
// application's release only queues the burst back to the worker, which frees its buffers on
// the core that received them (their cache lines, and the pool's per-core cache, stay there).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "core/engine.h"
#include "core/ring.h"
#include "netdaq/stats.h"

namespace netdaq::detail {

class RxQueueImpl final : public BurstOwner {
 public:
  RxQueueImpl(QueueResources res, std::unique_ptr<RxPort> port);
  ~RxQueueImpl();

  // Worker mode, called by the queue's worker thread only: one receive into the current
  // burst, handing it over when full or timed out. Returns whether packets arrived.
  bool worker_step() noexcept;
  // Worker mode, after the last step: hands over (or drops) a partial burst.
  void worker_finish() noexcept;
  // After the worker has finished: frees what the application released but the worker did not
  // reclaim, and bursts the application never polled. Later releases free at once. Idempotent.
  void stop() noexcept;
  RxBurst poll() noexcept;
  // A finite source has ended and every packet it produced was handed out (RxQueue::finished).
  bool finished() const noexcept;
  void release(BurstDesc* d) noexcept override;
  QueueStats stats() const;

  const QueueResources& resources() const noexcept { return res_; }
  int outstanding() const noexcept { return outstanding_.load(std::memory_order_relaxed); }

 private:
  void deliver_count(const BurstDesc& d) noexcept;
  void free_packets(BurstDesc* d) noexcept;  // the burst's buffers back to the engine; d reusable
  void reclaim() noexcept;                   // worker: frees the bursts the application returned
  void hand_over(BurstDesc* d) noexcept;  // worker: count, then push to ready_ (has room)
  void publish() noexcept;                // worker: the bursts handed over become visible
  bool worker_step_held() noexcept;      // worker_step for a finite source (hold_back_)
  BurstDesc* take_free() noexcept;
  void put_free(BurstDesc* d) noexcept;

  // Worker mode: the worker's free bursts, a plain stack only it touches (no atomics).
  BurstDesc* worker_take() noexcept;
  void worker_put(BurstDesc* d) noexcept { idle_[nidle_++] = d; }

  QueueResources res_;
  std::unique_ptr<RxPort> port_;
  std::vector<Packet> packets_;
  // A line per burst: the worker fills one while the application reads the one before.
  struct alignas(kCacheLine) LineDesc {
    BurstDesc d;
  };
  std::vector<LineDesc> descs_;
  BurstDesc spare_;                   // worker: receives here when the app holds every burst
  const bool hold_back_;              // finite source (a file): a full ring waits, never drops
  std::atomic<bool> drained_{false};  // worker: the port finished and its last burst was handed over
  // Direct mode: free bursts, taken by poll() and given back by release() on any thread.
  MpmcRing<BurstDesc*> free_;
  std::atomic<BurstDesc*> hot_{nullptr};  // the free burst released last (take_free)
  SpscRing<BurstDesc*> ready_;            // worker -> application
  MpmcRing<BurstDesc*> returned_;         // application -> worker (room for every burst)
  // The worker's side.
  alignas(kCacheLine) BurstDesc* cur_ = nullptr;  // the burst being filled
  uint64_t first_ns_ = 0;                         // when its first packet arrived
  std::unique_ptr<BurstDesc*[]> idle_;            // free bursts (worker_take / worker_put)
  uint32_t nidle_ = 0;
  uint32_t staged_ = 0;  // bursts handed over, not yet published
  // The application's side.
  alignas(kCacheLine) std::atomic<int> outstanding_{0};  // bursts held by the application
  std::atomic<bool> returning_;                           // the worker reclaims (until stop())
  std::atomic<int> releasing_{0};                         // application threads inside release() now
  // Both: returned packets the engine has not been told about, and the reclaim sequence lock.
  alignas(kCacheLine) std::atomic<int64_t> returned_packets_{0};
  std::atomic<uint32_t> reclaim_seq_{0};  // odd while the worker frees (stats() reads around it)
};


}  // namespace netdaq::detail
