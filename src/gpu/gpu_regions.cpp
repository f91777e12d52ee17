// GPU memory kinds of memory regions (pinned, mapped, device). Placeholder: issue 5 helper fills in.
#include "core/memory_region.h"

namespace netdaq::gpu {
void register_region_allocators() {}
}  // namespace netdaq::gpu
