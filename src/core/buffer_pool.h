// Fixed-size buffers carved from a memory region; the free list is an MPMC ring of indices,
// so any thread may free (bursts can be released on another thread than the one polling).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_region.h"
#include "core/ring.h"

namespace netdaq::detail {

class BufferPool {
 public:
  BufferPool(const MemoryRegion& region, uint32_t buf_size, uint32_t num_bufs);

  // Up to n buffer indices (fewer when the pool runs low). Never blocks.
  uint32_t alloc_burst(uint32_t* idx, uint32_t n) noexcept { return free_.dequeue_burst(idx, n); }
  // Exactly n or none.
  uint32_t alloc_bulk(uint32_t* idx, uint32_t n) noexcept { return free_.dequeue_bulk(idx, n); }
  void free_bulk(const uint32_t* idx, uint32_t n) noexcept;

  std::byte* address(uint32_t idx) const noexcept { return base_ + size_t{idx} * stride_; }
  // Index of the buffer containing ptr (for engines that get addresses back, e.g. AF_XDP).
  uint32_t index_of(const std::byte* p) const noexcept { return static_cast<uint32_t>((p - base_) / stride_); }

  uint32_t buf_size() const noexcept { return buf_size_; }
  size_t stride() const noexcept { return stride_; }
  uint32_t capacity() const noexcept { return num_bufs_; }
  uint32_t available() const noexcept { return free_.size_approx(); }
  const MemoryRegion& region() const noexcept { return region_; }

 private:
  const MemoryRegion& region_;
  std::byte* base_;
  size_t stride_;
  uint32_t buf_size_;
  uint32_t num_bufs_;
  MpmcRing<uint32_t> free_;
};

}  // namespace netdaq::detail
