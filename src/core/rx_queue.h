// RX queue: hands bursts from an engine's RxPort to the application, either polled directly
// by the caller or filled by a pinned worker thread through an SPSC ring of bursts.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "core/ring.h"
#include "netdaq/stats.h"

namespace netdaq::detail {

class RxQueueImpl final : public BurstOwner {
 public:
  RxQueueImpl(QueueResources res, std::unique_ptr<RxPort> port);
  ~RxQueueImpl();

  void start();          // worker mode: start the worker (throws Error if it cannot be pinned)
  void stop() noexcept;  // joins the worker; idempotent
  RxBurst poll() noexcept;
  void release(BurstDesc* d) noexcept override;
  QueueStats stats() const;

  const QueueResources& resources() const noexcept { return res_; }
  int outstanding() const noexcept { return outstanding_.load(std::memory_order_relaxed); }

 private:
  void worker_loop() noexcept;
  void deliver_count(const BurstDesc& d) noexcept;

  QueueResources res_;
  std::unique_ptr<RxPort> port_;
  std::vector<Packet> packets_;
  std::vector<BurstDesc> descs_;
  BurstDesc spare_;                  // worker: receives here when the app holds every burst
  MpmcRing<BurstDesc*> free_;
  SpscRing<BurstDesc*> ready_;
  std::thread worker_;
  std::atomic<bool> running_{false};
  std::atomic<int> outstanding_{0};  // bursts held by the application
};

// Pins the calling thread to cpu (if >= 0) and names it. Returns false (errno set) on failure.
bool pin_current_thread(int cpu, const std::string& name) noexcept;
// Throws Error(not_found) naming the queue when cpu is not one this process may run on.
void check_cpu_usable(int cpu, const std::string& queue_name);

}  // namespace netdaq::detail
