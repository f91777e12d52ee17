// TX queue: allocates bursts of pool buffers and passes them to the engine's TxPort,
// paced by an optional token bucket.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "core/engine.h"
#include "core/pacer.h"
#include "core/ring.h"
#include "netdaq/stats.h"

namespace netdaq::detail {

class TxQueueImpl final : public BurstOwner {
 public:
  TxQueueImpl(QueueResources res, std::unique_ptr<TxPort> port);
  ~TxQueueImpl();

  TxBurst allocate(size_t n) noexcept;
  uint32_t send(BurstDesc* d) noexcept override;
  void release(BurstDesc* d) noexcept override;
  QueueStats stats() const;
  // TxQueue::hand_over_rings (throws Error).
  HandedOverTxRings hand_over_rings(uint32_t payload_bytes, uint32_t buffers);
  const QueueResources& resources() const noexcept { return res_; }
  int outstanding() const noexcept { return outstanding_.load(std::memory_order_relaxed); }

 private:
  void put_back(BurstDesc* d) noexcept;  // to hot_ when empty, else the ring

  QueueResources res_;
  std::unique_ptr<TxPort> port_;
  Pacer pacer_;
  std::vector<Packet> packets_;
  std::vector<BurstDesc> descs_;
  MpmcRing<BurstDesc*> free_;
  // The last burst released, taken first by the next allocate (LIFO): a sender that allocates,
  // sends and releases one burst at a time reuses one descriptor whose packet lines are still
  // in L1, instead of cycling through ring_depth x batch_size lines (256 KiB at 64 x 64) in
  // ring order, each burst's from L2.
  std::atomic<BurstDesc*> hot_{nullptr};
  std::atomic<int> outstanding_{0};
  std::atomic<bool> handed_over_{false};  // hand_over_rings() gave the port's rings away
};

}  // namespace netdaq::detail
