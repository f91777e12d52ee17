// Memory regions: one contiguous allocation per configured region. Host and hugepage kinds
// live here; GPU kinds are provided by src/gpu through register_region_allocator().
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "netdaq/config.h"

namespace netdaq::detail {

class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  std::byte* base() const noexcept { return base_; }
  size_t size() const noexcept { return size_; }
  MemoryKind kind() const noexcept { return kind_; }      // what was actually allocated
  const std::string& name() const noexcept { return name_; }
  bool cpu_accessible() const noexcept { return kind_ != MemoryKind::device; }

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
