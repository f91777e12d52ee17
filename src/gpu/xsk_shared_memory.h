// The memory an XSK driver (xsk_receive.cuh, xsk_send.cuh) shares with its API thread and
// with the kernel: control blocks and rings allocated here (mapped pinned host memory when
// the driver is a GPU kernel, plain host memory for a CPU thread), the kernel's ring mappings
// registered with CUDA, and every address as the driver sees it. Frees all of it when
// destroyed (GPU drivers': once no other GPU driver runs, free_when_idle.h). A GPU driver's
// memory holds a PersistentKernelHold from before its kernel starts until after it exits.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpu/free_when_idle.h"
#include "netdaq/config.h"
#include "netdaq/shared_rings.h"

namespace netdaq::gpu::detail {

// A GPU driver reads or writes each packet in the UMEM over the bus: the region of `queue`
// (an rx queue if rx, else a tx queue) of `interface` must be kind mapped or pinned. Checked
// before the rings are taken, so that a refused driver leaves the queue as it was. Throws
// Error (invalid_config) naming the region; `use` says what the driver does with it.
void require_gpu_reachable_umem(const Config& c, std::string_view interface, bool rx, uint16_t queue,
                                const std::string& who, const char* use);

class XskSharedMemory {
 public:
  XskSharedMemory(bool gpu, std::string who);
  ~XskSharedMemory();
  XskSharedMemory(const XskSharedMemory&) = delete;
  XskSharedMemory& operator=(const XskSharedMemory&) = delete;

  // n zeroed values, 64-byte aligned, that both sides read and write. Throws Error.
  template <class T>
  T* alloc(size_t n) {
    return static_cast<T*>(alloc_bytes(n * sizeof(T)));
  }
  // Device memory (GPU driver only). Throws Error naming `what`.
  void* device_alloc(size_t bytes, const std::string& what);
  // A ring's mapping registered with CUDA (GPU driver; nothing for a CPU thread). Throws
  // Error (unsupported) when the driver refuses it.
  void register_ring(const SharedRing& r, const char* what);
  // The UMEM as the driver sees it: the region must be pinned host memory for the GPU.
  // Throws Error (invalid_config) saying so.
  std::byte* umem(std::byte* host, const char* region_needs);
  // A host address inside registered or allocated memory, as the driver sees it.
  template <class T>
  T* on_driver(T* host) {
    return static_cast<T*>(device_pointer(const_cast<std::remove_const_t<T>*>(host)));
  }
  bool gpu() const noexcept { return gpu_; }

 private:
  void* alloc_bytes(size_t bytes);
  void* device_pointer(void* host);

  bool gpu_;
  std::string who_;
  std::vector<void*> pinned_, device_;
  struct Registered {
    void* span;
    std::shared_ptr<void> address;  // the ring's address, held until unregistered
  };
  std::vector<Registered> registered_;
  std::vector<std::unique_ptr<std::byte[]>> plain_;
  std::optional<PersistentKernelHold> hold_;
};

}  // namespace netdaq::gpu::detail
