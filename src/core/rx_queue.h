// RX queue: hands bursts from an engine's RxPort to the application, either polled directly
// by the caller or filled by a pinned worker thread (worker_thread.h: one per CPU, serving
// every worker-mode queue pinned there) through an SPSC ring of bursts. In worker mode the
// application's release only marks the burst returned (one atomic exchange on the burst's own
// line); the worker frees its buffers on the core that received them (their cache lines, and
// the pool's per-core cache, stay there), taking the bursts back in the order it handed them.
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
  // RxQueue::hand_over_rings (throws Error).
  HandedOverRings hand_over_rings();
  // A finite source has ended and every packet it produced was handed out (RxQueue::finished).
  bool finished() const noexcept;
  void release(BurstDesc* d) noexcept override;
  QueueStats stats() const;

  const QueueResources& resources() const noexcept { return res_; }
  int outstanding() const noexcept;  // bursts the application holds

 private:
  void deliver_count(const BurstDesc& d) noexcept;
  void free_packets(BurstDesc* d) noexcept;  // the burst's buffers back to the engine; d reusable
  // worker: frees the oldest bursts while returned, but leaves the `keep` handed over last
  void reclaim(uint32_t keep = 0) noexcept;
  void reclaim_any() noexcept;               // worker: frees every returned burst (out of order)
  void hand_over(BurstDesc* d) noexcept;  // worker: count, then push to ready_ (has room)
  bool worker_step_held() noexcept;      // worker_step for a finite source (hold_back_)
  BurstDesc* take_free() noexcept;
  void put_free(BurstDesc* d) noexcept;

  // Worker mode: the worker's free bursts, a plain stack only it touches (no atomics).
  BurstDesc* worker_take() noexcept;
  void worker_put(BurstDesc* d) noexcept { idle_[nidle_++] = d; }

  QueueResources res_;
  std::unique_ptr<RxPort> port_;
  std::vector<Packet> packets_;
  // Worker mode: who has a burst. worker: free or being filled; app: handed over (in the
  // ring or held); returned: released, its buffers not yet freed; orphan: held by the
  // application after stop(), its release frees at once.
  enum class Holder : uint8_t { worker, app, returned, orphan };
  // A line per burst: the worker fills one while the application reads the one before, and
  // the application's release touches only the line it already has.
  struct alignas(kCacheLine) LineDesc {
    BurstDesc d;  // first: a BurstDesc* of descs_ is its LineDesc*
    std::atomic<Holder> holder{Holder::worker};
  };
  static LineDesc& line_of(BurstDesc* d) noexcept { return *reinterpret_cast<LineDesc*>(d); }
  // After a hand-over the worker leaves the bursts it handed over last unchecked: the
  // application is still taking their lines (poll, release); reading one there costs the worker
  // a stall on the other core (30% of its time on net_null, perf). Checked two steps later,
  // the line prefetched at the step's start has come back, released, and hits.
  static constexpr uint32_t kReclaimLag = 2;
  void free_returned(LineDesc& l) noexcept;  // worker: inside the reclaim sequence lock
  void begin_frees() noexcept;  // reclaim_seq_ odd: stats() waits or retries
  void end_frees() noexcept;
  uint64_t returned_buffers() const noexcept;
  std::unique_ptr<LineDesc[]> descs_;  // ring_depth of them
  BurstDesc spare_;                   // worker: receives here when the app holds every burst
  const bool hold_back_;              // finite source (a file): a full ring waits, never drops
  const bool worker_mode_;
  bool handed_over_ = false;          // hand_over_rings() gave the port's rings away
  std::atomic<bool> drained_{false};  // worker: the port finished and its last burst was handed over
  // Direct mode: free bursts, taken by poll() and given back by release() on any thread.
  MpmcRing<BurstDesc*> free_;
  std::atomic<BurstDesc*> hot_{nullptr};  // the free burst released last (take_free)
  SpscRing<BurstDesc*> ready_;            // worker -> application
  // The worker's side.
  alignas(kCacheLine) BurstDesc* cur_ = nullptr;  // the burst being filled
  uint64_t first_ns_ = 0;                         // when its first packet arrived
  std::unique_ptr<BurstDesc*[]> idle_;            // free bursts (worker_take / worker_put)
  uint32_t nidle_ = 0;
  // Handed-over bursts, oldest first: a FIFO of ring_depth slots (each burst is in it at most once).
  std::unique_ptr<LineDesc*[]> out_;
  uint32_t out_head_ = 0, out_tail_ = 0;  // free-running; out_[i & out_mask_]
  const uint32_t out_mask_;
  // Direct mode: bursts held by the application.
  alignas(kCacheLine) std::atomic<int> outstanding_{0};
  // Odd while the worker frees returned bursts: stats() reads around it.
  alignas(kCacheLine) std::atomic<uint32_t> reclaim_seq_{0};
};


}  // namespace netdaq::detail
