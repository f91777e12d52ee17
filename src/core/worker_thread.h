// Worker threads of worker-mode rx queues: one per CPU, pinned there, polling every queue
// pinned to that CPU in turn (several queues per core; queues without cpu_core get a thread
// each). A worker spins briefly when its queues are idle, then sleeps a little.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/rx_queue.h"

namespace netdaq::detail {

class WorkerThread {
 public:
  // Throws Error(not_found) naming a queue when cpu is not one this process may run on.
  WorkerThread(int cpu, std::vector<RxQueueImpl*> queues);
  ~WorkerThread();  // stop()
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  void stop() noexcept;  // the queues hand over their partial bursts; idempotent
  int cpu() const noexcept { return cpu_; }
  size_t queues() const noexcept { return queues_.size(); }

 private:
  void loop() noexcept;

  int cpu_;
  std::vector<RxQueueImpl*> queues_;
  std::atomic<bool> running_{true};
  std::thread thread_;
};

// One WorkerThread per CPU over the worker-mode queues (a thread each for unpinned ones).
std::vector<std::unique_ptr<WorkerThread>> start_workers(const std::vector<RxQueueImpl*>& queues);

}  // namespace netdaq::detail
