// Received bursts as Python objects: packets read in place through NumPy views.
#pragma once

#include "bindings.h"

namespace netdaq::python {

// One received burst, shared by the Python burst, its packets and every NumPy view of them:
// the buffers go back to the pool when the last of these goes.
struct RxBurstState {
  SessionPtr session;  // declared first: destroyed after the burst returns its buffers
  RxBurst burst;
  bool closed = false;  // release() was called: packets and new views raise ReleasedError
};

class PyRxBurst {
 public:
  PyRxBurst(SessionPtr session, RxBurst burst);
  size_t size() const noexcept { return size_; }
  uint64_t bytes() const noexcept { return bytes_; }
  bool released() const noexcept { return !state_; }
  const std::shared_ptr<RxBurstState>& state() const;  // raises ReleasedError when released
  // Ends the burst for Python; views already taken stay valid until they go.
  void release() noexcept;
  // Hands the burst itself over (gpu.FramePipeline.submit); refuses while views of it exist.
  RxBurst take(const char* who);

 private:
  std::shared_ptr<RxBurstState> state_;
  size_t size_ = 0;
  uint64_t bytes_ = 0;
};

struct PyRxQueue {
  SessionPtr session;
  RxQueue* queue;
};

}  // namespace netdaq::python
