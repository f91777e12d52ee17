// One RDMA device as the engine uses it: its protection domain and the netdaq memory regions
// registered on it (once per region, shared by the queues that use it).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "core/memory_region.h"
#include "engines/rdma/verbs.h"

namespace netdaq::detail::rdma {

class DeviceMemory {
 public:
  // Throws Error when the device gives no protection domain.
  explicit DeviceMemory(ibv_context* device);
  ibv_context* device() const noexcept { return device_; }
  ibv_pd* pd() const noexcept { return pd_.get(); }
  // The registration covering all of `region` (local write, remote write), made on first use.
  // Host kinds: ibv_reg_mr. Device memory: dma-buf (ibv_reg_dmabuf_mr on the region's
  // exported fd), then nvidia-peermem (ibv_reg_mr on the device pointer), with a warning when
  // only the second worked. Throws Error saying what was refused, each path tried and why, and
  // what to change (memlock limit, drivers, kind: pinned).
  ibv_mr* registration(const MemoryRegion& region, const std::string& context);

 private:
  ibv_context* device_;
  ProtectionDomain pd_;
  std::mutex mu_;
  std::map<const MemoryRegion*, MemoryRegistration> registrations_;
};

// The device's name ("rxe0", "mlx5_0").
std::string device_name(ibv_context* device);

// The two GPU-memory paths, apart (tests drive them with dma-bufs of their own):
// ibv_reg_dmabuf_mr of `buf` at address `iova`; on failure an empty owner and `why`.
MemoryRegistration register_dmabuf(ibv_pd* pd, const DmaBuf& buf, void* iova, std::string& why);
// dma-buf, then peermem; throws Error naming both failures (`what`: the message's start).
MemoryRegistration register_device_memory(ibv_pd* pd, const MemoryRegion& region, const std::string& what);

}  // namespace netdaq::detail::rdma
