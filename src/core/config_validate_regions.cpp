// Memory regions: names, kinds, sizes and GPU indices.
#include "core/config_check.h"

namespace netdaq::detail {

namespace {

bool is_gpu_kind(MemoryKind k) { return k == MemoryKind::pinned || k == MemoryKind::mapped || k == MemoryKind::device; }

}  // namespace

void check_regions(Checker& c) {
  const auto& regions = c.config().memory_regions;
  for (size_t i = 0; i < regions.size(); ++i) {
    const MemoryRegionConfig& r = regions[i];
    const std::string path = "memory_regions[" + std::to_string(i) + "]";
    if (r.name.empty()) c.error(path + ".name", "", "is required: every memory region needs a name");
    for (size_t j = 0; j < i && !r.name.empty(); ++j) {
      if (regions[j].name == r.name) {
        c.error(path + ".name", r.name, "duplicate region name (also memory_regions[" + std::to_string(j) + "])");
        break;
      }
    }
    if (static_cast<size_t>(r.kind) >= kMemoryKindNames.size())
      c.error(path + ".kind", std::to_string(static_cast<int>(r.kind)),
              "must be one of: " + join(std::span<const std::string_view>(kMemoryKindNames)));
    c.range(path + ".buf_size", r.buf_size, limits::buf_size);
    c.range(path + ".num_bufs", r.num_bufs, limits::num_bufs);
    c.range(path + ".gpu", r.gpu, limits::gpu);
    if (is_gpu_kind(r.kind) && r.gpu < 0)
      c.error(path + ".gpu", std::to_string(r.gpu),
              std::string("is required for kind ") + to_string(r.kind) + ": must be a GPU index >= 0");
    // A GPU index on a host kind is a mistake (wrong kind?), not something to ignore.
    if (r.gpu >= 0 && (r.kind == MemoryKind::host || r.kind == MemoryKind::huge))
      c.error(path + ".gpu", std::to_string(r.gpu),
              std::string("applies only to kinds pinned, mapped and device (this region is kind ") +
                  to_string(r.kind) + "): remove it, or choose one of those kinds");
  }
}

}  // namespace netdaq::detail
