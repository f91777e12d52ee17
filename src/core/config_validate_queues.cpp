// Rx and tx queues: ids, polling parameters and the memory regions they use.
#include "core/config_check.h"
#include "core/config_suggest.h"
#include "netdaq/engine_info.h"

namespace netdaq::detail {

namespace {

void check_regions_used(Checker& c, const QueueConfig& q, const std::string& path) {
  const Config& cfg = c.config();
  const size_t n = q.memory_regions.size();
  if (n < 1 || n > 2)
    c.error(path + ".memory_regions", n ? join(q.memory_regions) : "",
            "must name 1 memory region, or 2 for header-data split (has " + std::to_string(n) + ")");
  std::vector<std::string> defined;
  for (const auto& r : cfg.memory_regions) add_unique(defined, r.name);
  for (size_t k = 0; k < n; ++k) {
    const std::string& name = q.memory_regions[k];
    if (cfg.find_region(name)) continue;
    c.error(path + ".memory_regions[" + std::to_string(k) + "]", name,
            "is not a defined memory region" + did_you_mean(name, defined) + "; defined: " +
                (defined.empty() ? std::string("none") : join(defined)));
  }
}

// An engine without the device_memory capability reads and writes its buffers on the CPU.
void check_cpu_memory(Checker& c, const InterfaceConfig& iface, const QueueConfig& q, const std::string& path) {
  for (size_t k = 0; k < q.memory_regions.size(); ++k) {
    const MemoryRegionConfig* r = c.config().find_region(q.memory_regions[k]);
    if (!r || r->kind != MemoryKind::device) continue;
    c.error(path + ".memory_regions[" + std::to_string(k) + "]", r->name,
            "region '" + r->name + "' is device memory; the " + iface.engine +
                " engine needs CPU-accessible memory (kind host, huge, pinned or mapped): it does not receive into "
                "GPU memory");
  }
}

// cpu_only: the interface's engine lacks the device_memory capability.
void check_queue_list(Checker& c, const InterfaceConfig& iface, bool cpu_only, const std::vector<QueueConfig>& queues,
                      const std::string& path) {
  for (size_t j = 0; j < queues.size(); ++j) {
    const QueueConfig& q = queues[j];
    const std::string qpath = path + "[" + std::to_string(j) + "]";
    for (size_t k = 0; k < j; ++k) {
      if (queues[k].id == q.id) {
        c.error(qpath + ".id", std::to_string(q.id), "duplicate queue id (also " + path + "[" + std::to_string(k) + "])");
        break;
      }
    }
    if (static_cast<size_t>(q.mode) >= kPollModeNames.size())
      c.error(qpath + ".mode", std::to_string(static_cast<int>(q.mode)),
              "must be one of: " + join(std::span<const std::string_view>(kPollModeNames)));
    c.range(qpath + ".cpu_core", q.cpu_core, limits::cpu_core);
    c.range(qpath + ".batch_size", q.batch_size, limits::batch_size);
    c.range(qpath + ".timeout_us", q.timeout_us, limits::timeout_us);
    c.range(qpath + ".ring_depth", q.ring_depth, limits::ring_depth);
    check_regions_used(c, q, qpath);
    if (cpu_only) check_cpu_memory(c, iface, q, qpath);
  }
}

}  // namespace

void check_queues(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const auto caps = capabilities_of(iface);
  const bool cpu_only = caps && !caps->device_memory;
  check_queue_list(c, iface, cpu_only, iface.rx.queues, path + ".rx.queues");
  check_queue_list(c, iface, cpu_only, iface.tx.queues, path + ".tx.queues");
}

}  // namespace netdaq::detail
