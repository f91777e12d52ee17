// Stand-in for a build without CUDA: the GPU-driven sender says so clearly.
#include "netdaq/gpu_xsk_send.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

struct XskFrameSender::Impl {};

XskFrameSender::XskFrameSender(Session&, std::string_view, uint16_t, const XskSendLayout&, Driver) {
  throw Error(Errc::unsupported,
              "xsk frame sender: this build of netdaq has no GPU support (rebuild with a CUDA toolkit installed)");
}
XskFrameSender::~XskFrameSender() = default;
bool XskFrameSender::send(const void*, uint64_t) noexcept { return false; }
uint64_t XskFrameSender::frames_sent() const noexcept { return 0; }
void XskFrameSender::stop() noexcept {}
XskSendStats XskFrameSender::stats() const noexcept { return {}; }
uint64_t XskFrameSender::frame_bytes() const noexcept { return 0; }
XskFrameSender::Driver XskFrameSender::driver() const noexcept { return Driver::cpu; }

}  // namespace netdaq::gpu
