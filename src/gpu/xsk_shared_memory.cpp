#include "gpu/xsk_shared_memory.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "gpu/cuda_check.h"

namespace netdaq::gpu::detail {

XskSharedMemory::XskSharedMemory(bool gpu, std::string who) : gpu_(gpu), who_(std::move(who)) {
  if (gpu_) hold_.emplace();
}

// The driver has exited. Its memory and its rings' registrations go when no other GPU driver
// runs (free_when_idle.h: freeing and unregistering wait for the device), this one's hold
// last. Until then a ring's pages stay pinned and its address held (SharedRing::address_hold:
// a queue that goes first leaves an inaccessible mapping there, no new ring lands on it).
XskSharedMemory::~XskSharedMemory() {
  if (!gpu_) return;
  // A ring's address stays this registration's (address_hold) until it is unregistered.
  for (const auto& [p, address] : registered_) free_when_idle([p, address] { (void)cudaHostUnregister(p); });
  for (void* p : device_) free_when_idle([p] { (void)cudaFree(p); });
  for (void* p : pinned_) free_when_idle([p] { (void)cudaFreeHost(p); });
  hold_.reset();
}

void require_gpu_reachable_umem(const Config& c, std::string_view interface, bool rx, uint16_t queue,
                                const std::string& who, const char* use) {
  for (const InterfaceConfig& i : c.interfaces) {
    if (i.name != interface) continue;
    for (const QueueConfig& q : rx ? i.rx.queues : i.tx.queues) {
      if (q.id != queue || q.memory_regions.empty()) continue;
      for (const MemoryRegionConfig& r : c.memory_regions)
        if (r.name == q.memory_regions[0] && r.kind != MemoryKind::mapped && r.kind != MemoryKind::pinned)
          throw Error(Errc::invalid_config, who + ": memory region '" + r.name + "' is kind " + to_string(r.kind) +
                                                "; the GPU driver " + use + ": kind mapped (or pinned)");
    }
  }
}

void* XskSharedMemory::alloc_bytes(size_t bytes) {
  void* p = nullptr;
  if (gpu_) {
    check(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable), who_ + ": cudaHostAlloc");
    pinned_.push_back(p);
  } else {
    plain_.push_back(std::make_unique<std::byte[]>(bytes + 64));
    p = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(plain_.back().get()) + 63) & ~uintptr_t{63});
  }
  std::memset(p, 0, bytes);
  return p;
}

void* XskSharedMemory::device_alloc(size_t bytes, const std::string& what) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), who_ + ": cudaMalloc of " + std::to_string(bytes) + " bytes of " + what);
  device_.push_back(p);
  return p;
}

void XskSharedMemory::register_ring(const SharedRing& r, const char* what) {
  if (!gpu_) return;
  const cudaError_t e = cudaHostRegister(r.span, r.span_bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (e == cudaErrorHostMemoryAlreadyRegistered)  // where the address could not be held
      throw Error(Errc::resource, who_ + ": the " + what + " ring's mapping landed where memory is still registered "
                                         "with CUDA (a GPU XSK driver's rings, destroyed while another GPU driver "
                                         "ran, wait for it to unregister: that waits for the device); stop this "
                                         "process's GPU XSK drivers together, then start new ones");
    throw Error(Errc::unsupported, who_ + ": the " + what + " ring's mapping cannot be registered with CUDA: " + describe(e));
  }
  registered_.push_back({r.span, r.address_hold});
}

std::byte* XskSharedMemory::umem(std::byte* host, const char* region_needs) {
  if (!gpu_) return host;
  void* dev = nullptr;
  if (cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(Errc::invalid_config, who_ + ": the queue's memory region must be kind mapped (pinned host memory the "
                                             "GPU reaches): " + region_needs);
  }
  return static_cast<std::byte*>(dev);
}

void* XskSharedMemory::device_pointer(void* host) {
  if (!gpu_ || !host) return host;
  void* dev = nullptr;
  check(cudaHostGetDevicePointer(&dev, host, 0), who_ + ": cudaHostGetDevicePointer");
  return dev;
}

}  // namespace netdaq::gpu::detail
