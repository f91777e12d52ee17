// Freeing pinned or device memory (cudaFreeHost, cudaFree) waits for the whole device. A
// persistent kernel that runs until told to stop (the XSK drivers') never lets that wait end:
// a session's memory region freed while a GPU receiver runs in the same process would hang.
// Such kernels hold a PersistentKernelHold while they may run; memory freed meanwhile is
// freed when the last hold goes.
#pragma once

#include <functional>

namespace netdaq::gpu::detail {

class PersistentKernelHold {
 public:
  PersistentKernelHold();
  ~PersistentKernelHold();  // the last one frees what waited
  PersistentKernelHold(const PersistentKernelHold&) = delete;
  PersistentKernelHold& operator=(const PersistentKernelHold&) = delete;
};

// Runs `free` now when no hold is alive, else when the last one goes. Never throws.
void free_when_idle(std::function<void()> free) noexcept;

}  // namespace netdaq::gpu::detail
