#include "core/worker_thread.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "core/log.h"
#include "core/ring.h"
#include "netdaq/status.h"
#include "util/errno_text.h"

namespace netdaq::detail {

namespace {

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

// Idle policy for a worker whose queues had nothing: spin briefly (low latency), then sleep
// a little so idle queues do not burn a core.
void idle_backoff(uint32_t empty_polls) noexcept {
  if (empty_polls < 2048) {
    NETDAQ_CPU_RELAX();
  } else {
    timespec ts{0, 20'000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace

WorkerThread::WorkerThread(int cpu, std::vector<RxQueueImpl*> queues) : cpu_(cpu), queues_(std::move(queues)) {
  for (auto* q : queues_) check_cpu_usable(cpu, q->resources().name);
  thread_ = std::thread([this] { loop(); });
}

WorkerThread::~WorkerThread() { stop(); }

void WorkerThread::stop() noexcept {
  running_.store(false, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void WorkerThread::loop() noexcept {
  const std::string name =
      queues_.size() == 1 ? "ndq-" + queues_[0]->resources().name : "ndq-cpu" + std::to_string(cpu_);
  if (!pin_current_thread(cpu_, name))
    log()->error("{}: cannot pin worker to cpu {}: {}", name, cpu_, errno_text(errno));
  uint32_t empty_polls = 0;
  while (running_.load(std::memory_order_relaxed)) {
    bool got = false;
    for (auto* q : queues_) got |= q->worker_step();
    if (got) {
      empty_polls = 0;
    } else {
      idle_backoff(empty_polls++);
    }
  }
  for (auto* q : queues_) q->worker_finish();
}

std::vector<std::unique_ptr<WorkerThread>> start_workers(const std::vector<RxQueueImpl*>& queues) {
  std::map<int, std::vector<RxQueueImpl*>> by_cpu;
  std::vector<std::unique_ptr<WorkerThread>> workers;
  for (auto* q : queues) {
    if (q->resources().queue->mode != PollMode::worker) continue;
    const int cpu = q->resources().queue->cpu_core;
    if (cpu < 0) {
      workers.push_back(std::make_unique<WorkerThread>(cpu, std::vector<RxQueueImpl*>{q}));
    } else {
      by_cpu[cpu].push_back(q);
    }
  }
  for (auto& [cpu, qs] : by_cpu) workers.push_back(std::make_unique<WorkerThread>(cpu, qs));
  return workers;
}

}  // namespace netdaq::detail
