// Stand-in for a build without CUDA: the GPU-driven receiver says so clearly.
#include "netdaq/gpu_xsk.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

struct XskFrameReceiver::Impl {};

XskFrameReceiver::XskFrameReceiver(Session&, std::string_view, const ReorderConfig&, Driver) {
  throw Error(Errc::unsupported,
              "xsk frame receiver: this build of netdaq has no GPU support (rebuild with a CUDA toolkit installed)");
}
XskFrameReceiver::~XskFrameReceiver() = default;
Frame XskFrameReceiver::next_frame() noexcept { return {}; }
void XskFrameReceiver::stop() noexcept {}
PipelineStats XskFrameReceiver::stats() const noexcept { return {}; }
uint64_t XskFrameReceiver::wakeups() const noexcept { return 0; }
size_t XskFrameReceiver::frame_bytes() const noexcept { return 0; }
XskFrameReceiver::Driver XskFrameReceiver::driver() const noexcept { return Driver::cpu; }
void XskFrameReceiver::release_frame(uint32_t) noexcept {}

}  // namespace netdaq::gpu
