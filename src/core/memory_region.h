// Memory regions: one contiguous allocation per configured region. Host and hugepage kinds
// live here; GPU kinds are provided by src/gpu through register_region_allocator().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "netdaq/config.h"

namespace netdaq::detail {

// A dma-buf that exports a region's memory; fd is owned (closed) by the caller.
struct DmaBuf {
  int fd = -1;
  uint64_t offset = 0;  // where the region starts within the dma-buf
  size_t size = 0;
};

// NIC registration hooks (GPUDirect RDMA): engines that let the NIC write into GPU memory ask
// gpudirect_path() how. "dmabuf": export_dmabuf() and register the fd (rdma engine:
// ibv_reg_dmabuf_mr; dpdk engine: rte_extmem_register + rte_dev_dma_map of base()).
// "peermem": nvidia_peermem lets the NIC driver pin base() directly (ibv_reg_mr).
// "none": the NIC cannot reach this GPU memory. Host memory (host, huge, pinned, mapped)
// needs none of this: the NIC reaches it like any host memory.
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  std::byte* base() const noexcept { return base_; }
  size_t size() const noexcept { return size_; }
  MemoryKind kind() const noexcept { return kind_; }      // what was actually allocated
  const std::string& name() const noexcept { return name_; }
  bool cpu_accessible() const noexcept { return kind_ != MemoryKind::device; }

  virtual int gpu() const noexcept { return -1; }  // the GPU of pinned/mapped/device kinds
  // Throws Error(unsupported) for host kinds and for GPUs that cannot export dma-bufs.
  virtual DmaBuf export_dmabuf() const;
  virtual const char* gpudirect_path() const noexcept { return "none"; }

 protected:
  MemoryRegion(std::string name, MemoryKind kind, std::byte* base, size_t size)
      : name_(std::move(name)), kind_(kind), base_(base), size_(size) {}

 private:
  std::string name_;
  MemoryKind kind_;
  std::byte* base_;
  size_t size_;
};

// Bytes between consecutive buffers: buf_size rounded up to a cache line.
size_t buffer_stride(uint32_t buf_size) noexcept;

// Allocates a region big enough for cfg.num_bufs buffers. Throws Error with a clear message
// (e.g. how to reserve hugepages when kind is huge and hugepages_required is set).
std::unique_ptr<MemoryRegion> create_region(const MemoryRegionConfig& cfg);

using RegionAllocator = std::unique_ptr<MemoryRegion> (*)(const MemoryRegionConfig&, size_t bytes);
void register_region_allocator(MemoryKind kind, RegionAllocator alloc);

}  // namespace netdaq::detail
