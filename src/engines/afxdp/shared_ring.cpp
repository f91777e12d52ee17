#include "engines/afxdp/shared_ring.h"

#include <sys/mman.h>

namespace netdaq::detail::afxdp {

void* throwaway_mapping(size_t bytes) noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void drop_mapping(void* p, size_t bytes) noexcept { (void)munmap(p, bytes); }

bool RingAddress::park() noexcept {
  parked_ = mmap(span_, bytes_, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) != MAP_FAILED;
  return parked_;
}

RingAddress::~RingAddress() {
  if (parked_) (void)munmap(span_, bytes_);
}

}  // namespace netdaq::detail::afxdp
