// Stand-ins for a build without CUDA: every GPU entry point says so clearly.
#include "netdaq/gpu.h"
#include "netdaq/status.h"

namespace netdaq::gpu {
namespace {
constexpr const char* kWhy = "this build of netdaq has no GPU support (rebuild with a CUDA toolkit installed)";
}

bool built_in() noexcept { return false; }
int device_count() noexcept { return 0; }
std::string unavailable_reason() { return kWhy; }
std::vector<DeviceInfo> devices() { return {}; }

struct FramePipeline::Impl {};

FramePipeline::FramePipeline(Session&, std::string_view, const ReorderConfig&) {
  throw Error(Errc::unsupported, std::string("gpu frame pipeline: ") + kWhy);
}
FramePipeline::FramePipeline(const ReorderConfig&) {
  throw Error(Errc::unsupported, std::string("gpu frame pipeline: ") + kWhy);
}
FramePipeline::~FramePipeline() = default;
void FramePipeline::submit(RxBurst&& burst) noexcept { burst.release(); }
Frame FramePipeline::next_frame() noexcept { return {}; }
void FramePipeline::flush() noexcept {}
void FramePipeline::synchronize() {}
PipelineStats FramePipeline::stats() const noexcept { return {}; }
std::vector<StreamStats> FramePipeline::stream_stats() const { return {}; }
size_t FramePipeline::stream_stats(std::span<StreamStats>) const noexcept { return 0; }
const ReorderConfig& FramePipeline::config() const noexcept {
  static const ReorderConfig none;
  return none;
}
Stream FramePipeline::stream() const noexcept { return nullptr; }
size_t FramePipeline::frame_bytes() const noexcept { return 0; }
const char* FramePipeline::last_malformed() const noexcept { return ""; }
void FramePipeline::release_frame(uint32_t) noexcept {}

}  // namespace netdaq::gpu
