#include "gpu/xsk_shared_memory.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "gpu/cuda_check.h"

namespace netdaq::gpu::detail {

namespace {

// Freeing pinned or device memory waits for the whole device, so while another XSK driver's
// persistent kernel runs (a receiver's, when a sender goes first) it would wait forever.
// Memory of GPU drivers is freed when the last of them goes; until then it waits here. (The
// rings' registrations go at once: the socket unmaps them next, and a new socket may map
// its rings at the same addresses.) Not enough yet: on the H200, destroying a GPU sender
// while a GPU receiver's kernel ran still hung (docs/gpu-afxdp.md, limits).
struct Graveyard {
  std::mutex mutex;
  int live = 0;  // GPU drivers' memories not yet destroyed
  std::vector<void*> device, pinned;
};

Graveyard& graveyard() {
  static Graveyard g;
  return g;
}

}  // namespace

XskSharedMemory::XskSharedMemory(bool gpu, std::string who) : gpu_(gpu), who_(std::move(who)) {
  if (!gpu_) return;
  Graveyard& g = graveyard();
  std::lock_guard lock(g.mutex);
  ++g.live;
}

XskSharedMemory::~XskSharedMemory() {
  if (!gpu_) return;
  for (void* p : registered_) (void)cudaHostUnregister(p);
  Graveyard& g = graveyard();
  std::lock_guard lock(g.mutex);
  g.device.insert(g.device.end(), device_.begin(), device_.end());
  g.pinned.insert(g.pinned.end(), pinned_.begin(), pinned_.end());
  if (--g.live > 0) return;
  for (void* p : g.device) (void)cudaFree(p);
  for (void* p : g.pinned) (void)cudaFreeHost(p);
  g.device.clear();
  g.pinned.clear();
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
    throw Error(Errc::unsupported, who_ + ": the " + what + " ring's mapping cannot be registered with CUDA: " + describe(e));
  }
  registered_.push_back(r.span);
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
