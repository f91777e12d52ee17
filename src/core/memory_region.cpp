#include "core/memory_region.h"

#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/log.h"
#include "netdaq/status.h"

namespace netdaq::detail {
void register_builtin_region_allocators();  // generated from src/engines_builtin.cpp.in
namespace {

constexpr size_t kHugePage = 2u << 20;

class MmapRegion final : public MemoryRegion {
 public:
  MmapRegion(std::string name, MemoryKind kind, std::byte* base, size_t size)
      : MemoryRegion(std::move(name), kind, base, size) {}
  ~MmapRegion() override { munmap(base(), size()); }
};

std::array<RegionAllocator, 5>& allocators() {
  static std::array<RegionAllocator, 5> table{};
  return table;
}

std::unique_ptr<MemoryRegion> map_anonymous(const MemoryRegionConfig& cfg, size_t bytes, bool huge) {
  const size_t len = huge ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
  if (huge) flags |= MAP_HUGETLB;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    if (huge) return nullptr;
    throw_system_error("memory region '" + cfg.name + "': mmap of " + std::to_string(len) + " bytes", err);
  }
  return std::make_unique<MmapRegion>(cfg.name, huge ? MemoryKind::huge : MemoryKind::host,
                                      static_cast<std::byte*>(p), len);
}

}  // namespace

DmaBuf MemoryRegion::export_dmabuf() const {
  throw Error(Errc::unsupported, "memory region '" + name_ + "': kind " + to_string(kind_) +
                                     " cannot be exported as a dma-buf (only kind device can)");
}

size_t buffer_stride(uint32_t buf_size) noexcept { return (size_t{buf_size} + 63) / 64 * 64; }

void register_region_allocator(MemoryKind kind, RegionAllocator alloc) {
  allocators()[static_cast<size_t>(kind)] = alloc;
}

std::unique_ptr<MemoryRegion> create_region(const MemoryRegionConfig& cfg) {
  static const bool builtins = (register_builtin_region_allocators(), true);
  (void)builtins;
  const size_t bytes = buffer_stride(cfg.buf_size) * cfg.num_bufs;
  switch (cfg.kind) {
    case MemoryKind::host:
      return map_anonymous(cfg, bytes, false);
    case MemoryKind::huge: {
      if (auto r = map_anonymous(cfg, bytes, true)) return r;
      const size_t pages = (bytes + kHugePage - 1) / kHugePage;
      const std::string how = "reserve them with: echo " + std::to_string(pages) +
                              " > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
      if (cfg.hugepages_required)
        throw Error(Errc::resource, "memory region '" + cfg.name + "': needs " + std::to_string(pages) +
                                        " free 2 MiB hugepages and could not get them; " + how);
      log()->warn("memory region '{}': no {} free 2 MiB hugepages; using normal pages instead ({})",
                  cfg.name, pages, how);
      return map_anonymous(cfg, bytes, false);
    }
    case MemoryKind::pinned:
    case MemoryKind::mapped:
    case MemoryKind::device: {
      if (auto alloc = allocators()[static_cast<size_t>(cfg.kind)]) return alloc(cfg, bytes);
      throw Error(Errc::unsupported, std::string("memory region '") + cfg.name + "': kind " +
                                         to_string(cfg.kind) +
                                         " needs GPU support, and this build of netdaq has none "
                                         "(rebuild with CUDA installed)");
    }
  }
  throw Error(Errc::invalid_config, "memory region '" + cfg.name + "': unknown kind");
}

}  // namespace netdaq::detail
