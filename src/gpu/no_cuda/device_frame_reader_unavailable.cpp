// Stand-ins for a build without CUDA: video-send --from-gpu says so clearly.
#include "netdaq/device_frames.h"
#include "netdaq/status.h"

namespace netdaq::gpu {
namespace {
[[noreturn]] void unavailable() {
  throw Error(Errc::unsupported,
              "video frames from the GPU: this build of netdaq has no GPU support (rebuild with a CUDA toolkit installed)");
}
}  // namespace

struct DeviceFrameReader::Impl {};
DeviceFrameReader::DeviceFrameReader(const void*, size_t, size_t, int) { unavailable(); }
DeviceFrameReader::~DeviceFrameReader() = default;
std::span<const std::byte> DeviceFrameReader::slots() const noexcept { return {}; }
void DeviceFrameReader::begin_frame(uint64_t) { unavailable(); }
uint64_t DeviceFrameReader::waits() const noexcept { return 0; }

DeviceCopy::DeviceCopy(std::span<const std::byte>, int) { unavailable(); }
DeviceCopy::~DeviceCopy() = default;

}  // namespace netdaq::gpu
