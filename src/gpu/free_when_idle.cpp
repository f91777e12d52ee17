#include "gpu/free_when_idle.h"

#include <mutex>
#include <vector>

namespace netdaq::gpu::detail {

namespace {

struct Waiting {
  std::mutex mutex;
  int holds = 0;
  std::vector<std::function<void()>> frees;
};

Waiting& waiting() {
  static Waiting w;
  return w;
}

}  // namespace

PersistentKernelHold::PersistentKernelHold() {
  Waiting& w = waiting();
  std::lock_guard lock(w.mutex);
  ++w.holds;
}

PersistentKernelHold::~PersistentKernelHold() {
  std::vector<std::function<void()>> now;
  {
    Waiting& w = waiting();
    std::lock_guard lock(w.mutex);
    if (--w.holds > 0) return;
    now.swap(w.frees);
  }
  for (auto& f : now) f();  // outside the lock: a free may take a while
}

void free_when_idle(std::function<void()> free) noexcept {
  {
    Waiting& w = waiting();
    std::lock_guard lock(w.mutex);
    if (w.holds > 0) {
      w.frees.push_back(std::move(free));
      return;
    }
  }
  free();
}

}  // namespace netdaq::gpu::detail
