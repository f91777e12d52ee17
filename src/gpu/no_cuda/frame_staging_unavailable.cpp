// Stand-in for a build without CUDA: GPU frames for the fleet say so clearly.
#include "netdaq/frame_staging.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

struct FrameStaging::Impl {};
FrameStaging::FrameStaging(uint32_t, size_t, int) {
  throw Error(Errc::unsupported,
              "GPU frame staging: this build of netdaq has no GPU support (rebuild with a CUDA toolkit installed)");
}
FrameStaging::~FrameStaging() = default;
uint32_t FrameStaging::stage(const void*, size_t) noexcept { return kNone; }
bool FrameStaging::ready(uint32_t&, bool&) noexcept { return false; }
bool FrameStaging::synchronize() noexcept { return false; }
std::span<const std::byte> FrameStaging::bytes(uint32_t) const noexcept { return {}; }
void FrameStaging::release(uint32_t) noexcept {}
uint32_t FrameStaging::buffers() const noexcept { return 0; }
size_t FrameStaging::buffer_bytes() const noexcept { return 0; }
uint32_t FrameStaging::busy() const noexcept { return 0; }
StagingStats FrameStaging::stats() const noexcept { return {}; }

}  // namespace netdaq::gpu
