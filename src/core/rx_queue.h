// RX queue: hands bursts from an engine's RxPort to the application, either polled directly
// by the caller or filled by a pinned worker thread (worker_thread.h: one per CPU, serving
// every worker-mode queue pinned there) through an SPSC ring of bursts.
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
  // After the worker has finished: releases bursts the application never polled. Idempotent.
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
  void hand_over(BurstDesc* d) noexcept;  // worker: count, then push to ready_ (has room)
  bool worker_step_held() noexcept;      // worker_step for a finite source (hold_back_)
  BurstDesc* take_free() noexcept;
  void put_free(BurstDesc* d) noexcept;

  QueueResources res_;
  std::unique_ptr<RxPort> port_;
  std::vector<Packet> packets_;
  std::vector<BurstDesc> descs_;
  BurstDesc spare_;                  // worker: receives here when the app holds every burst
  MpmcRing<BurstDesc*> free_;
  std::atomic<BurstDesc*> hot_{nullptr};  // the free burst released last (take_free)
  SpscRing<BurstDesc*> ready_;
  BurstDesc* cur_ = nullptr;         // worker: the burst being filled
  uint64_t first_ns_ = 0;            // worker: when its first packet arrived
  std::atomic<int> outstanding_{0};  // bursts held by the application
  const bool hold_back_;              // finite source (a file): a full ring waits, never drops
  std::atomic<bool> drained_{false};  // worker: the port finished and its last burst was handed over
};


}  // namespace netdaq::detail
