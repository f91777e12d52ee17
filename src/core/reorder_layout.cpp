#include "core/reorder_layout.h"

namespace netdaq::detail {

const MemoryRegionConfig* segment_region(const Config& cfg, const QueueConfig& q, uint64_t offset, uint64_t n) {
  uint64_t start = 0;
  for (const auto& name : q.memory_regions) {
    const MemoryRegionConfig* r = cfg.find_region(name);
    if (!r) return nullptr;
    if (offset >= start && offset + n <= start + r->buf_size) return r;
    start += r->buf_size;
  }
  return nullptr;
}

}  // namespace netdaq::detail
