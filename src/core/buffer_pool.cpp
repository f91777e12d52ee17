#include "core/buffer_pool.h"

#include <vector>

#include "netdaq/status.h"

namespace netdaq::detail {

BufferPool::BufferPool(const MemoryRegion& region, uint32_t buf_size, uint32_t num_bufs)
    : region_(region),
      base_(region.base()),
      stride_(buffer_stride(buf_size)),
      buf_size_(buf_size),
      num_bufs_(num_bufs),
      free_(num_bufs) {
  if (stride_ * num_bufs > region.size())
    throw Error(Errc::resource, "pool of " + std::to_string(num_bufs) + " x " + std::to_string(buf_size) +
                                    " B does not fit region '" + region.name() + "'");
  std::vector<uint32_t> all(num_bufs);
  for (uint32_t i = 0; i < num_bufs; ++i) all[i] = i;
  free_.enqueue_bulk(all.data(), num_bufs);
}

void BufferPool::free_bulk(const uint32_t* idx, uint32_t n) noexcept {
  // The ring holds every buffer, so returning buffers we handed out always fits.
  uint32_t done = 0;
  while (done < n) done += free_.enqueue_burst(idx + done, n - done);
}

}  // namespace netdaq::detail
