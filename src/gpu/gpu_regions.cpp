// GPU memory kinds of memory regions: pinned and mapped host memory (cudaHostAlloc) and
// device memory (cudaMalloc), registered with core/memory_region through
// register_region_allocator(). Device regions export dma-bufs for GPUDirect RDMA.
#include <cuda.h>  // driver types only: libcuda is reached through the runtime's entry points
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>

#include "core/log.h"
#include "core/memory_region.h"
#include "gpu/cuda_check.h"
#include "gpu/free_when_idle.h"
#include "netdaq/gpu.h"

namespace netdaq::gpu {
namespace {

using netdaq::detail::DmaBuf;
using netdaq::detail::MemoryRegion;
using netdaq::gpu::detail::free_when_idle;

constexpr size_t kDeviceAlign = 2u << 20;  // dma-buf export needs host-page-aligned ranges

std::string who(const MemoryRegionConfig& cfg) { return "memory region '" + cfg.name + "'"; }

void alloc_failed(const MemoryRegionConfig& cfg, const char* call, size_t bytes, int gpu, cudaError_t err) {
  (void)cudaGetLastError();
  throw Error(Errc::resource, who(cfg) + ": " + call + " of " + std::to_string(bytes) + " bytes on gpu " +
                                  std::to_string(gpu) + " failed: " + describe(err));
}

// Frees with `gpu` current (then restores the caller's device): destructors may run on any thread.
template <class Free>
void free_on(int gpu, Free free) noexcept {
  int prev = -1;
  (void)cudaGetDevice(&prev);
  (void)cudaSetDevice(gpu);
  // cudaErrorCudartUnloading: the process is exiting and CUDA already released everything.
  if (const cudaError_t err = free(); err != cudaSuccess && err != cudaErrorCudartUnloading) {
    (void)cudaGetLastError();
    netdaq::detail::log()->warn("gpu {}: freeing a memory region failed: {}", gpu, describe(err));
  }
  if (prev >= 0 && prev != gpu) (void)cudaSetDevice(prev);
}

class HostRegion final : public MemoryRegion {
 public:
  HostRegion(const MemoryRegionConfig& cfg, int gpu, std::byte* p, size_t bytes)
      : MemoryRegion(cfg.name, cfg.kind, p, bytes), gpu_(gpu) {}
  ~HostRegion() override {
    // Not while a persistent XSK driver runs: cudaFreeHost would wait for it forever.
    free_when_idle([gpu = gpu_, p = base()] { free_on(gpu, [p] { return cudaFreeHost(p); }); });
  }
  int gpu() const noexcept override { return gpu_; }

 private:
  int gpu_;
};

std::unique_ptr<MemoryRegion> alloc_host(const MemoryRegionConfig& cfg, size_t bytes) {
  const int gpu = cfg.gpu < 0 ? 0 : cfg.gpu;
  use_device(gpu, who(cfg));
  const bool mapped = cfg.kind == MemoryKind::mapped;
  const unsigned flags = cudaHostAllocPortable | (mapped ? cudaHostAllocMapped : 0u);
  void* p = nullptr;
  if (const cudaError_t err = cudaHostAlloc(&p, bytes, flags); err != cudaSuccess)
    alloc_failed(cfg, "cudaHostAlloc", bytes, gpu, err);
  auto region = std::make_unique<HostRegion>(cfg, gpu, static_cast<std::byte*>(p), bytes);
  if (mapped) {
    // Under UVA (every 64-bit Linux GPU) the GPU sees mapped memory at the host address;
    // kernels are handed base() directly, so insist on it.
    void* dev = nullptr;
    check(cudaHostGetDevicePointer(&dev, p, 0), who(cfg) + ": cudaHostGetDevicePointer");
    if (dev != p)
      throw Error(Errc::unsupported, who(cfg) + ": gpu " + std::to_string(gpu) +
                                         " maps host memory at a different address (no unified addressing)");
  }
  return region;
}

// cuMemGetHandleForAddressRange from the driver that cudart loaded (libcuda is not linked).
PFN_cuMemGetHandleForAddressRange_v11070 get_handle_fn(std::string* why) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const cudaError_t err = cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 11070,
                                                           cudaEnableDefault, &q);
  if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
    (void)cudaGetLastError();
    *why = "the driver has no cuMemGetHandleForAddressRange (" +
           (err != cudaSuccess ? describe(err) : "query result " + std::to_string(static_cast<int>(q))) + ")";
    return nullptr;
  }
  return reinterpret_cast<PFN_cuMemGetHandleForAddressRange_v11070>(fn);
}

std::string driver_error(CUresult r) {
  void* fn = nullptr;
  const char* name = nullptr;
  if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &fn, 6000, cudaEnableDefault, nullptr) == cudaSuccess && fn)
    reinterpret_cast<PFN_cuGetErrorName_v6000>(fn)(r, &name);
  else
    (void)cudaGetLastError();
  return name ? std::string(name) : "CUresult " + std::to_string(static_cast<int>(r));
}

class DeviceRegion final : public MemoryRegion {
 public:
  DeviceRegion(const MemoryRegionConfig& cfg, int gpu, void* raw, std::byte* base, size_t bytes, const char* path)
      : MemoryRegion(cfg.name, MemoryKind::device, base, bytes), gpu_(gpu), raw_(raw), path_(path) {}
  ~DeviceRegion() override {
    free_when_idle([gpu = gpu_, p = raw_] { free_on(gpu, [p] { return cudaFree(p); }); });
  }
  int gpu() const noexcept override { return gpu_; }
  const char* gpudirect_path() const noexcept override { return path_; }

  DmaBuf export_dmabuf() const override {
    const std::string me = "memory region '" + name() + "' (gpu " + std::to_string(gpu_) + ")";
    if (std::string(path_) != "dmabuf")
      throw Error(Errc::unsupported, me + ": this GPU or driver cannot export dma-bufs (GPUDirect path: " +
                                         path_ + "); needs the open NVIDIA kernel modules and Linux >= 5.12");
    std::string why;
    auto fn = get_handle_fn(&why);
    if (!fn) throw Error(Errc::unsupported, me + ": " + why);
    use_device(gpu_, me);
    int fd = -1;
    const CUresult r = fn(&fd, reinterpret_cast<CUdeviceptr>(base()), size(), CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (r != CUDA_SUCCESS || fd < 0)
      throw Error(Errc::unsupported, me + ": cuMemGetHandleForAddressRange(DMA_BUF_FD) of " +
                                         std::to_string(size()) + " bytes failed: " + driver_error(r));
    return DmaBuf{fd, 0, size()};
  }

 private:
  int gpu_;
  void* raw_;
  const char* path_;
};

const char* gpudirect_path_of(int gpu) {
  for (const DeviceInfo& d : devices())
    if (d.index == gpu) return d.dmabuf ? "dmabuf" : d.peermem ? "peermem" : "none";
  return "none";
}

std::unique_ptr<MemoryRegion> alloc_device(const MemoryRegionConfig& cfg, size_t bytes) {
  const int gpu = cfg.gpu < 0 ? 0 : cfg.gpu;
  use_device(gpu, who(cfg));
  const size_t size = (bytes + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* raw = nullptr;
  if (const cudaError_t err = cudaMalloc(&raw, size); err != cudaSuccess)
    alloc_failed(cfg, "cudaMalloc", size, gpu, err);
  std::byte* base = static_cast<std::byte*>(raw);
  if (reinterpret_cast<uintptr_t>(raw) % page != 0) {
    // Not seen in practice (cudaMalloc hands out 2 MiB-aligned blocks); over-allocate and align.
    (void)cudaFree(raw);
    if (const cudaError_t err = cudaMalloc(&raw, size + kDeviceAlign); err != cudaSuccess)
      alloc_failed(cfg, "cudaMalloc", size + kDeviceAlign, gpu, err);
    const uintptr_t a = (reinterpret_cast<uintptr_t>(raw) + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
    base = reinterpret_cast<std::byte*>(a);
  }
  auto region = std::make_unique<DeviceRegion>(cfg, gpu, raw, base, size, gpudirect_path_of(gpu));
  check(cudaMemset(base, 0, size), who(cfg) + ": cudaMemset");  // zeroed like host regions
  check(cudaStreamSynchronize(nullptr), who(cfg) + ": cudaMemset");
  return region;
}

}  // namespace

void register_region_allocators() {
  netdaq::detail::register_region_allocator(MemoryKind::pinned, alloc_host);
  netdaq::detail::register_region_allocator(MemoryKind::mapped, alloc_host);
  netdaq::detail::register_region_allocator(MemoryKind::device, alloc_device);
}

}  // namespace netdaq::gpu
