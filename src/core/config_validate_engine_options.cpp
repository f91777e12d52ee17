// Option blocks written for an engine the interface does not use (socket:, afxdp:, dpdk:, ...).
// The engine would ignore them, so they are reported instead (like a gpu index on a host
// region): usually the engine or the block is wrong. Only options that differ from their
// defaults count; an engine may declare blocks it ignores on purpose (rdma: socket:).
#include <algorithm>

#include "core/config_check.h"
#include "core/engine_descriptor.h"

namespace netdaq::detail {

void check_other_engine_options(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  // An unknown engine name is reported on its own; guessing which options it meant would not help.
  const EngineDescriptor* own = find_descriptor(iface.engine);
  if (!own) return;
  const auto& ignored = own->ignores_blocks;
  const auto own_block =
      std::find_if(own->blocks.begin(), own->blocks.end(), [](const OptionBlockSpec& b) { return !b.top_level; });
  for (const auto* other : engine_descriptors()) {
    if (other == own) continue;
    for (const auto& block : other->blocks) {
      if (block.top_level || std::find(ignored.begin(), ignored.end(), block.key) != ignored.end()) continue;
      const OptionBlock* set = iface.options.find(block.key);
      if (!set) continue;
      const std::string hint = own_block != own->blocks.end() && block.common_names
                                   ? " (the " + iface.engine + " engine's options are under " +
                                         std::string(own_block->key) + ":)"
                                   : "";
      for (const auto& o : block.set_options(*set))
        c.error(path + "." + std::string(block.key) + "." + o.key, o.value,
                "is an option of the " + other->name + " engine; this interface's engine is '" + iface.engine +
                    "', which ignores it: remove it, or set engine: " + other->name + hint);
    }
  }
}

}  // namespace netdaq::detail
